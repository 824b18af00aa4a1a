/**
 * OAuth 2.0 system clients: created by an administrator (secret shown once), listed without secrets, revoked.
 * Client tokens are checked against their client on every request through a small cache: a revocation is seen at
 * once by the process that made it and within CACHE_TTL_MS by the others.
 */
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { SCOPES, type Scope } from "./principal.ts";
import { hashSecret, randomSecret, sha256Hex, verifySecret } from "./secrets.ts";

const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export interface ClientRecord {
  clientId: string;
  name: string;
  scopes: Scope[];
  bootstrap: boolean;
  createdAt: Date;
  revokedAt: Date | null;
}

interface ClientRow {
  client_id: string;
  name: string;
  secret_hash: string;
  scopes: string[];
  bootstrap: boolean;
  created_at: Date;
  tokens_valid_after: Date | null;
  revoked_at: Date | null;
}

export type ClientCheck =
  { ok: true; client: ClientRecord } | { ok: false; reason: "unknown_client" | "revoked" | "wrong_secret" };

interface TokenStatus {
  revoked: boolean;
  /** Tokens with iat (seconds) below this are refused. */
  validFromSeconds: number;
  checkedAt: number;
}

export class ClientStore {
  private readonly pool: pg.Pool;
  private readonly cache = new Map<string, TokenStatus>();

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async create(name: string, scopes: Scope[]): Promise<{ client: ClientRecord; clientSecret: string }> {
    const clientId = `cli_${randomBytes(10).toString("hex")}`;
    const clientSecret = `lcs_${randomSecret(32)}`;
    const { rows } = await this.pool.query<ClientRow>(
      `INSERT INTO oauth_clients (client_id, name, secret_hash, scopes) VALUES ($1, $2, $3, $4) RETURNING *`,
      [clientId, name, await hashSecret(clientSecret, "random"), normaliseScopes(scopes)],
    );
    return { client: toRecord(rows[0]), clientSecret };
  }

  async list(includeRevoked: boolean): Promise<ClientRecord[]> {
    const { rows } = await this.pool.query<ClientRow>(
      `SELECT * FROM oauth_clients ${includeRevoked ? "" : "WHERE revoked_at IS NULL"} ORDER BY created_at, client_id`,
    );
    return rows.map(toRecord);
  }

  async find(clientId: string): Promise<ClientRecord | undefined> {
    const row = await this.#row(clientId);
    return row && toRecord(row);
  }

  async #row(clientId: string): Promise<ClientRow | undefined> {
    return (await this.pool.query<ClientRow>(`SELECT * FROM oauth_clients WHERE client_id = $1`, [clientId])).rows[0];
  }

  /** Revokes a client (idempotent); its secret and the tokens it holds stop working. */
  async revoke(clientId: string): Promise<void> {
    await this.pool.query(`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, now()) WHERE client_id = $1`, [
      clientId,
    ]);
    this.cache.delete(clientId);
  }

  /**
   * Checks a client's credentials at the token endpoint. Every outcome costs one hash comparison of the kind the id
   * would have: an unknown id is compared against a dummy hash (SHA-256 for an id shaped like a generated one,
   * scrypt like the bootstrap admin's otherwise), and a revoked client against its own, so the time taken does not
   * say whether an id exists.
   */
  async authenticate(clientId: string, secret: string): Promise<ClientCheck> {
    const row = await this.#row(clientId);
    const matches = await verifySecret(secret, row?.secret_hash ?? (await dummyHashFor(clientId)));
    if (!row) return { ok: false, reason: "unknown_client" };
    if (row.revoked_at) return { ok: false, reason: "revoked" };
    if (!matches) return { ok: false, reason: "wrong_secret" };
    return { ok: true, client: toRecord(row) };
  }

  /** Whether a client token issued at `iatSeconds` is still honoured (client exists, not revoked, secret not rotated since). */
  async tokenStatus(clientId: string, iatSeconds: number): Promise<"ok" | "revoked" | "rotated"> {
    let status = this.cache.get(clientId);
    if (!status || Date.now() - status.checkedAt > CACHE_TTL_MS) {
      const { rows } = await this.pool.query<Pick<ClientRow, "revoked_at" | "tokens_valid_after">>(
        `SELECT revoked_at, tokens_valid_after FROM oauth_clients WHERE client_id = $1`,
        [clientId],
      );
      const row = rows[0];
      status = {
        revoked: !row || row.revoked_at !== null,
        validFromSeconds: !row
          ? Infinity
          : row.tokens_valid_after
            ? Math.floor(row.tokens_valid_after.getTime() / 1000)
            : 0,
        checkedAt: Date.now(),
      };
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(clientId, status);
    }
    if (status.revoked) return "revoked";
    if (iatSeconds < status.validFromSeconds) return "rotated";
    return "ok";
  }

  /**
   * Ensures the bootstrap admin client: created with scope admin; its hash updated when the secret changed (tokens
   * issued under the old secret are then refused); any earlier bootstrap client with another id is revoked. Says
   * what changed (for the audit trail).
   */
  async upsertBootstrapAdmin(
    clientId: string,
    secret: string,
  ): Promise<{ created: boolean; rotated: boolean; revoked: string[] }> {
    const row = await this.#row(clientId);
    const rotated = row !== undefined && !(await verifySecret(secret, row.secret_hash));
    if (!row) {
      await this.pool.query(
        `INSERT INTO oauth_clients (client_id, name, secret_hash, scopes, bootstrap) VALUES ($1, 'Bootstrap administrator', $2, '{admin}', true)
         ON CONFLICT (client_id) DO NOTHING`,
        [clientId, await hashSecret(secret, "chosen")],
      );
    } else {
      await this.pool.query(
        `UPDATE oauth_clients
            SET secret_hash = CASE WHEN $2::text IS NULL THEN secret_hash ELSE $2 END,
                tokens_valid_after = CASE WHEN $2::text IS NULL THEN tokens_valid_after ELSE now() END,
                scopes = CASE WHEN 'admin' = ANY (scopes) THEN scopes ELSE scopes || '{admin}'::text[] END,
                bootstrap = true,
                revoked_at = NULL
          WHERE client_id = $1`,
        [clientId, rotated ? await hashSecret(secret, "chosen") : null],
      );
    }
    const revoked = await this.pool.query<{ client_id: string }>(
      `UPDATE oauth_clients SET revoked_at = now() WHERE bootstrap AND client_id <> $1 AND revoked_at IS NULL RETURNING client_id`,
      [clientId],
    );
    this.cache.clear();
    return { created: !row, rotated, revoked: revoked.rows.map((r) => r.client_id) };
  }
}

/** Generated client ids (ClientStore.create); their secrets are stored as SHA-256, any other id's with scrypt. */
const GENERATED_CLIENT_ID = /^cli_[0-9a-f]{20}$/;
const DUMMY_RANDOM_HASH = `sha256:${sha256Hex("no such client")}`;
let dummyChosenHash: Promise<string> | undefined;

/** A hash no secret matches, of the kind a client with this id would have. */
function dummyHashFor(clientId: string): Promise<string> {
  if (GENERATED_CLIENT_ID.test(clientId)) return Promise.resolve(DUMMY_RANDOM_HASH);
  dummyChosenHash ??= hashSecret(randomSecret(32), "chosen");
  return dummyChosenHash;
}

/** Known scopes, unique, in the canonical order. */
export function normaliseScopes(scopes: readonly string[]): Scope[] {
  return SCOPES.filter((scope) => scopes.includes(scope));
}

function toRecord(row: ClientRow): ClientRecord {
  return {
    clientId: row.client_id,
    name: row.name,
    scopes: normaliseScopes(row.scopes),
    bootstrap: row.bootstrap,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
