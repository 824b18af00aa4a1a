/**
 * What department authentication reads and writes: a department's stored credentials (joined with the index, so a
 * department is visible only once its registration is indexed, and its `active` flag is the chain's) and the
 * signatures already used (replay protection).
 */
import type pg from "pg";

export interface DepartmentCredentials {
  code: string;
  /** `sha256:<hex>` of the API key. */
  apiKeyHash: string;
  /** The API secret sealed by the key vault (the HMAC key of signed requests). */
  apiSecretSealed: Buffer;
  requireSignedRequests: boolean;
  /** index.departments.active: read on every request, never cached. */
  active: boolean;
}

export class DepartmentCredentialStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async byCode(code: string): Promise<DepartmentCredentials | undefined> {
    const { rows } = await this.#pool.query(
      `SELECT d.code, d.api_key_hash, d.api_secret_sealed, d.require_signed_requests, i.active
       FROM departments d JOIN index.departments i ON i.code = d.code WHERE d.code = $1`,
      [code],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      code: row.code,
      apiKeyHash: row.api_key_hash,
      apiSecretSealed: row.api_secret_sealed,
      requireSignedRequests: row.require_signed_requests,
      active: row.active,
    };
  }

  /** Forgets signatures older than `retentionSeconds` (they would be refused by their timestamp anyway). */
  async purgeUsedSignatures(retentionSeconds: number): Promise<void> {
    await this.#pool.query(
      `DELETE FROM department_request_signatures WHERE signed_at < now() - interval '1 second' * $1`,
      [retentionSeconds],
    );
  }

  /** Remembers a signature; false when this department already used it. */
  async recordSignature(code: string, signature: string, timestamp: number): Promise<boolean> {
    const used = await this.#pool.query(
      `INSERT INTO department_request_signatures (department_code, signature, signed_at)
       VALUES ($1, $2, to_timestamp($3)) ON CONFLICT DO NOTHING`,
      [code, signature, timestamp],
    );
    return used.rowCount !== 0;
  }
}
