/** Serialises changes to one workflow type across API processes with a Postgres session advisory lock. */
import type pg from "pg";
import { conflict } from "../domain/errors.ts";

const WORKFLOW_LOCK_CLASS = 0x574b46; // "WKF": advisory lock class of workflow changes, keyed by type

/**
 * Runs `run` holding a session advisory lock for the workflow type (across API processes), so that two changes of
 * one type (POST/POST, PUT/PUT, PUT/DELETE) never interleave between their check and their transaction.
 */
export async function withWorkflowTypeLock<T>(pool: pg.Pool, workflowType: string, run: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    try {
      await client.query(`SELECT set_config('lock_timeout', '30s', false)`);
      await client.query(`SELECT pg_advisory_lock($1, hashtext($2))`, [WORKFLOW_LOCK_CLASS, workflowType]);
    } catch (error) {
      if ((error as { code?: string }).code === "55P03") {
        throw conflict("WORKFLOW_BUSY", `Another change to the ${workflowType} workflow is in progress; try again`);
      }
      throw error;
    } finally {
      await client.query(`RESET lock_timeout`).catch(() => (broken = true));
    }
    try {
      return await run();
    } finally {
      await client
        .query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [WORKFLOW_LOCK_CLASS, workflowType])
        .catch(() => (broken = true));
    }
  } finally {
    // A connection that could not unlock is dropped, which releases its locks.
    client.release(broken);
  }
}
