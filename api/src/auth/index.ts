/**
 * Authentication module (STUB: replaced by the implementation). Contract:
 * - authenticate: bearer JWT (applicant or client) → Principal; X-API-Key → the department hook (issue 5)
 * - routes (under /api/v1), rootRoutes (at /): token endpoints, identity locker, admin clients, JWKS
 * - bootstrapAdmin: ensures the configured admin client exists
 */
import type { Logger } from "pino";
import type pg from "pg";
import type { Config } from "../config.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import type { Authenticator, Principal } from "./principal.ts";

export type DepartmentKeyCheck = (apiKey: string, departmentCode: string, ctx: import("koa").Context) => Promise<Principal | undefined>;

export interface AuthModule {
  authenticate: Authenticator;
  routes: RouteDefinition[];
  rootRoutes: RouteDefinition[];
  bootstrapAdmin(): Promise<{ clientId: string }>;
}

export async function createAuth(_deps: { config: Config; pool: pg.Pool; logger: Logger; departments?: DepartmentKeyCheck }): Promise<AuthModule> {
  return { authenticate: async () => undefined, routes: [], rootRoutes: [], bootstrapAdmin: async () => ({ clientId: "" }) };
}
