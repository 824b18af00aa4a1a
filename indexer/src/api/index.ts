/**
 * Ponder requires this Hono app; Ponder itself serves /health, /ready, /status and /metrics next to it.
 * Nothing else is mounted: the platform API reads the tables from Postgres (views schema). Ponder's graphql()
 * middleware is left out on purpose: it writes generated/schema.graphql into the working directory (the repo
 * root when run with --root indexer).
 */
import { Hono } from "hono";

const app = new Hono();

export default app;
