/**
 * Short-lived, single-use records of the identity-locker sign-in, stored hashed in Postgres:
 * - our authorization codes (CODE_TTL_SECONDS), handed to the applicant's redirect_uri and exchanged once;
 * - sign-ins in progress at the external provider (LOGIN_TTL_SECONDS), keyed by the `state` we sent it.
 * Taking a record deletes it in the same statement, so two concurrent exchanges cannot both succeed.
 */
import type pg from "pg";
import { randomSecret, sha256Hex } from "./secrets.ts";
import type { ApplicantIdentity } from "./tokens.ts";

export const CODE_TTL_SECONDS = 60;
export const LOGIN_TTL_SECONDS = 600;
const SWEEP_EVERY_MS = 60_000;

/** What our code is bound to: the applicant client, its redirect_uri and its PKCE challenge (S256). */
export interface CodeBinding {
  redirectUri: string;
  clientId: string;
  codeChallenge: string;
}

export interface PendingLogin extends CodeBinding {
  clientState: string;
  codeVerifier: string;
}

export type CodeRedemption =
  ({ ok: true; identity: ApplicantIdentity } & CodeBinding) | { ok: false; reason: "unknown" | "expired" };

export class IdentityCodeStore {
  private readonly pool: pg.Pool;
  private lastSweep = 0;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Issues a code for `identity`, bound to the client, its redirect_uri and its PKCE challenge. */
  async issueCode(identity: ApplicantIdentity, binding: CodeBinding): Promise<string> {
    await this.sweep();
    const code = randomSecret(32);
    await this.pool.query(
      `INSERT INTO identity_codes (code_hash, redirect_uri, subject, name, email, idp, expires_at, client_id, code_challenge)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), $8, $9)`,
      [
        sha256Hex(code),
        binding.redirectUri,
        identity.id,
        identity.name ?? null,
        identity.email ?? null,
        identity.idp,
        CODE_TTL_SECONDS,
        binding.clientId,
        binding.codeChallenge,
      ],
    );
    return code;
  }

  /** Takes the code (it cannot be used again, whatever the outcome). */
  async redeemCode(code: string): Promise<CodeRedemption> {
    const { rows } = await this.pool.query(
      `DELETE FROM identity_codes WHERE code_hash = $1
       RETURNING redirect_uri, subject, name, email, idp, expires_at <= now() AS expired, client_id, code_challenge`,
      [sha256Hex(code)],
    );
    const row = rows[0];
    if (!row) return { ok: false, reason: "unknown" };
    if (row.expired) return { ok: false, reason: "expired" };
    const identity: ApplicantIdentity = { id: row.subject, idp: row.idp };
    if (row.name) identity.name = row.name;
    if (row.email) identity.email = row.email;
    return {
      ok: true,
      identity,
      redirectUri: row.redirect_uri,
      clientId: row.client_id,
      codeChallenge: row.code_challenge,
    };
  }

  /** Records a sign-in sent to the external provider; returns the `state` to send it. */
  async startLogin(login: PendingLogin): Promise<string> {
    await this.sweep();
    const state = randomSecret(32);
    await this.pool.query(
      `INSERT INTO identity_logins (state_hash, redirect_uri, client_state, code_verifier, expires_at, client_id, code_challenge)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5), $6, $7)`,
      [
        sha256Hex(state),
        login.redirectUri,
        login.clientState,
        login.codeVerifier,
        LOGIN_TTL_SECONDS,
        login.clientId,
        login.codeChallenge,
      ],
    );
    return state;
  }

  /** Takes the sign-in the provider's callback refers to; undefined when unknown, used or expired. */
  async finishLogin(state: string): Promise<PendingLogin | undefined> {
    const { rows } = await this.pool.query(
      `DELETE FROM identity_logins WHERE state_hash = $1 RETURNING redirect_uri, client_state, code_verifier, expires_at <= now() AS expired, client_id, code_challenge`,
      [sha256Hex(state)],
    );
    const row = rows[0];
    if (!row || row.expired) return undefined;
    return {
      redirectUri: row.redirect_uri,
      clientState: row.client_state,
      codeVerifier: row.code_verifier,
      clientId: row.client_id,
      codeChallenge: row.code_challenge,
    };
  }

  /** Deletes long-expired records, at most once a minute per process. */
  private async sweep(): Promise<void> {
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    await this.pool.query(`DELETE FROM identity_codes WHERE expires_at < now() - interval '1 hour'`);
    await this.pool.query(`DELETE FROM identity_logins WHERE expires_at < now() - interval '1 hour'`);
  }
}
