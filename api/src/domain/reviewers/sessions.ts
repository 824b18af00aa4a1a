/**
 * Console sessions: a random cookie value whose sha256 is stored, ended by sign-out, by removing the reviewer or
 * the passkey that opened it, after 30 minutes without a request, and 12 hours after sign-in whatever happens.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/queryable.ts";
import * as store from "../../stores/reviewerStore.ts";

export const SESSION_IDLE_SECONDS = 30 * 60;
export const SESSION_ABSOLUTE_SECONDS = 12 * 60 * 60;
/** last_seen_at is written at most this often, so reading the console is not a write per request. */
export const SESSION_TOUCH_SECONDS = 60;

export const tokenHashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** Opens a session for the reviewer's passkey; the cookie value (shown only to the browser). */
export async function startSession(tx: Db, reviewerId: string, passkeyId: string): Promise<string> {
  const token = randomBytes(32).toString("base64url");
  await store.insertSession(tx, {
    tokenHash: tokenHashOf(token),
    reviewerId,
    passkeyId,
    expiresAt: new Date(Date.now() + SESSION_ABSOLUTE_SECONDS * 1000),
  });
  return token;
}
