/**
 * Reviewers of departments, their invitations and passkeys, sign-in challenges and console sessions
 * (migrations 033 and 034), written and read here. "Active" means not removed: a removed reviewer's passkeys and
 * sessions are removed and ended with it.
 */
import type { Db } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export interface Reviewer {
  id: string;
  departmentCode: string;
  name: string;
  createdAt: Date;
}

export interface ReviewerPasskey {
  /** The WebAuthn credential id, base64url. */
  id: string;
  reviewerId: string;
  deviceName: string;
  cosePublicKey: Buffer;
  /** 0x qx ‖ qy: the key a DepartmentPasskeyAccount stores. */
  publicKey: string;
  signCount: number;
  transports: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface Invitation {
  id: string;
  reviewerId: string;
  expiresAt: Date;
  usedAt: Date | null;
  challenge: string | null;
  challengeExpiresAt: Date | null;
  deviceName: string | null;
}

export interface ConsoleSession {
  tokenHash: string;
  reviewerId: string;
  passkeyId: string;
  departmentCode: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

const toReviewer = (row: Record<string, any>): Reviewer => ({
  id: row.id,
  departmentCode: row.department_code,
  name: row.name,
  createdAt: row.created_at,
});

/** The reviewer joined to an invitation or passkey row (its created_at as reviewer_created_at). */
const joinedReviewer = (row: Record<string, any>) =>
  toReviewer({ ...row, id: row.reviewer_id, created_at: row.reviewer_created_at });

const toPasskey = (row: Record<string, any>): ReviewerPasskey => ({
  id: row.id,
  reviewerId: row.reviewer_id,
  deviceName: row.device_name,
  cosePublicKey: row.cose_public_key,
  publicKey: row.p256_key,
  signCount: Number(row.sign_count),
  transports: row.transports,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

const toInvitation = (row: Record<string, any>): Invitation => ({
  id: row.id,
  reviewerId: row.reviewer_id,
  expiresAt: row.expires_at,
  usedAt: row.used_at,
  challenge: row.challenge,
  challengeExpiresAt: row.challenge_expires_at,
  deviceName: row.device_name,
});

export async function insertReviewer(
  tx: Db,
  reviewer: { id: string; departmentCode: string; name: string; invitedBy: string },
): Promise<Reviewer> {
  return toReviewer(await insertRow(tx, "reviewers", reviewer, "*"));
}

export async function insertInvitation(
  tx: Db,
  invitation: { id: string; reviewerId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await insertRow(tx, "reviewer_invitations", invitation);
}

/** A department's active reviewers, oldest first. */
export async function activeReviewersOf(db: Db, departmentCode: string): Promise<Reviewer[]> {
  const { rows } = await db.query(
    `SELECT * FROM reviewers WHERE department_code = $1 AND removed_at IS NULL ORDER BY created_at, id`,
    [departmentCode],
  );
  return rows.map(toReviewer);
}

/** The latest invitation of each of these reviewers. */
export async function latestInvitations(db: Db, reviewerIds: string[]): Promise<Map<string, Invitation>> {
  if (reviewerIds.length === 0) return new Map();
  const { rows } = await db.query(
    `SELECT DISTINCT ON (reviewer_id) * FROM reviewer_invitations WHERE reviewer_id = ANY($1)
     ORDER BY reviewer_id, created_at DESC`,
    [reviewerIds],
  );
  return new Map(rows.map((row) => [row.reviewer_id as string, toInvitation(row)]));
}

/**
 * The invitation with this token hash whose reviewer is active, locked for the ceremony (`forUpdate`) when in a
 * transaction. Expired and used ones are returned too: the caller refuses them alike.
 */
export async function invitationByTokenHash(
  db: Db,
  tokenHash: string,
  forUpdate = false,
): Promise<(Invitation & { reviewer: Reviewer }) | undefined> {
  const { rows } = await db.query(
    `SELECT i.*, r.department_code, r.name, r.created_at AS reviewer_created_at
     FROM reviewer_invitations i JOIN reviewers r ON r.id = i.reviewer_id
     WHERE i.token_hash = $1 AND r.removed_at IS NULL ${forUpdate ? "FOR UPDATE OF i" : ""}`,
    [tokenHash],
  );
  return rows[0] && { ...toInvitation(rows[0]), reviewer: joinedReviewer(rows[0]) };
}

export async function startRegistration(
  db: Db,
  invitationId: string,
  ceremony: { challenge: string; expiresAt: Date; deviceName: string },
): Promise<void> {
  await db.query(
    `UPDATE reviewer_invitations SET challenge = $2, challenge_expires_at = $3, device_name = $4 WHERE id = $1`,
    [invitationId, ceremony.challenge, ceremony.expiresAt, ceremony.deviceName],
  );
}

export async function useInvitation(tx: Db, invitationId: string): Promise<void> {
  await tx.query(
    `UPDATE reviewer_invitations SET used_at = now(), challenge = NULL, challenge_expires_at = NULL WHERE id = $1`,
    [invitationId],
  );
}

/** Whether a credential id or a P-256 key is already registered (removed passkeys too: ids are never reused). */
export async function passkeyExists(db: Db, credentialId: string, publicKey: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM reviewer_passkeys WHERE id = $1 OR p256_key = $2`, [
    credentialId,
    publicKey,
  ]);
  return rows.length > 0;
}

export async function insertPasskey(
  tx: Db,
  passkey: Omit<ReviewerPasskey, "createdAt" | "lastUsedAt">,
): Promise<ReviewerPasskey> {
  const { publicKey, ...row } = passkey;
  return toPasskey(await insertRow(tx, "reviewer_passkeys", { ...row, p256Key: publicKey }, "*"));
}

/** An active passkey of an active reviewer, with that reviewer (`forUpdate` locks the passkey's row). */
export async function activePasskey(
  db: Db,
  credentialId: string,
  forUpdate = false,
): Promise<(ReviewerPasskey & { reviewer: Reviewer }) | undefined> {
  const { rows } = await db.query(
    `SELECT p.*, r.department_code, r.name, r.created_at AS reviewer_created_at
     FROM reviewer_passkeys p JOIN reviewers r ON r.id = p.reviewer_id
     WHERE p.id = $1 AND p.removed_at IS NULL AND r.removed_at IS NULL ${forUpdate ? "FOR UPDATE OF p" : ""}`,
    [credentialId],
  );
  return rows[0] && { ...toPasskey(rows[0]), reviewer: joinedReviewer(rows[0]) };
}

/** The active passkeys of these reviewers (oldest first). */
export async function activePasskeysOf(db: Db, reviewerIds: string[]): Promise<ReviewerPasskey[]> {
  if (reviewerIds.length === 0) return [];
  const { rows } = await db.query(
    `SELECT * FROM reviewer_passkeys WHERE reviewer_id = ANY($1) AND removed_at IS NULL ORDER BY created_at, id`,
    [reviewerIds],
  );
  return rows.map(toPasskey);
}

export async function recordPasskeyUse(tx: Db, credentialId: string, signCount: number): Promise<void> {
  await tx.query(`UPDATE reviewer_passkeys SET sign_count = $2, last_used_at = now() WHERE id = $1`, [
    credentialId,
    signCount,
  ]);
}

/** Removes a reviewer, their passkeys and their sessions; false when there was no such active reviewer. */
export async function removeReviewer(tx: Db, departmentCode: string, reviewerId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE reviewers SET removed_at = now() WHERE id = $1 AND department_code = $2 AND removed_at IS NULL`,
    [reviewerId, departmentCode],
  );
  if (!rowCount) return false;
  await tx.query(`UPDATE reviewer_passkeys SET removed_at = now() WHERE reviewer_id = $1 AND removed_at IS NULL`, [
    reviewerId,
  ]);
  await tx.query(`UPDATE console_sessions SET ended_at = now() WHERE reviewer_id = $1 AND ended_at IS NULL`, [
    reviewerId,
  ]);
  return true;
}

/** Removes one passkey of a department's active reviewer and ends its sessions; undefined when there is none. */
export async function removePasskey(
  tx: Db,
  departmentCode: string,
  reviewerId: string,
  passkeyId: string,
): Promise<{ publicKey: string; deviceName: string } | undefined> {
  const { rows } = await tx.query(
    `UPDATE reviewer_passkeys p SET removed_at = now() FROM reviewers r
     WHERE p.id = $1 AND p.reviewer_id = $2 AND p.removed_at IS NULL
       AND r.id = p.reviewer_id AND r.department_code = $3 AND r.removed_at IS NULL
     RETURNING p.p256_key, p.device_name`,
    [passkeyId, reviewerId, departmentCode],
  );
  if (!rows[0]) return undefined;
  await tx.query(`UPDATE console_sessions SET ended_at = now() WHERE passkey_id = $1 AND ended_at IS NULL`, [
    passkeyId,
  ]);
  return { publicKey: rows[0].p256_key, deviceName: rows[0].device_name };
}

export async function insertSignInChallenge(db: Db, challenge: string, expiresAt: Date): Promise<void> {
  // Expired challenges are swept here: sign-in options are the only writer.
  await db.query(`DELETE FROM webauthn_challenges WHERE expires_at < now()`, []);
  await db.query(`INSERT INTO webauthn_challenges (challenge, purpose, expires_at) VALUES ($1, 'SIGN_IN', $2)`, [
    challenge,
    expiresAt,
  ]);
}

/** Consumes a sign-in challenge (one use): true when it existed and had not expired. */
export async function consumeSignInChallenge(db: Db, challenge: string): Promise<boolean> {
  const { rows } = await db.query(
    `DELETE FROM webauthn_challenges WHERE challenge = $1 AND purpose = 'SIGN_IN' RETURNING expires_at > now() AS live`,
    [challenge],
  );
  return rows[0]?.live === true;
}

export async function insertSession(
  tx: Db,
  session: { tokenHash: string; reviewerId: string; passkeyId: string; expiresAt: Date },
): Promise<void> {
  await insertRow(tx, "console_sessions", session);
}

/**
 * A live session: not ended, within its absolute expiry and seen within `idleSeconds`, of an active reviewer and
 * passkey of a department that is active on chain.
 */
export async function liveSession(db: Db, tokenHash: string, idleSeconds: number): Promise<ConsoleSession | undefined> {
  const { rows } = await db.query(
    `SELECT s.*, r.department_code FROM console_sessions s
     JOIN reviewers r ON r.id = s.reviewer_id
     JOIN reviewer_passkeys p ON p.id = s.passkey_id
     JOIN index.departments d ON d.code = r.department_code
     WHERE s.token_hash = $1 AND s.ended_at IS NULL AND s.expires_at > now()
       AND s.last_seen_at > now() - make_interval(secs => $2)
       AND r.removed_at IS NULL AND p.removed_at IS NULL AND d.active`,
    [tokenHash, idleSeconds],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    tokenHash: row.token_hash,
    reviewerId: row.reviewer_id,
    passkeyId: row.passkey_id,
    departmentCode: row.department_code,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
  };
}

/** Moves a session's idle expiry on, at most once per `everySeconds` (one write a minute, not one per request). */
export async function touchSession(db: Db, tokenHash: string, everySeconds: number): Promise<void> {
  await db.query(
    `UPDATE console_sessions SET last_seen_at = now()
     WHERE token_hash = $1 AND last_seen_at < now() - make_interval(secs => $2)`,
    [tokenHash, everySeconds],
  );
}

/** Ends a session; the reviewer it belonged to, or undefined when it was not live. */
export async function endSession(db: Db, tokenHash: string): Promise<string | undefined> {
  const { rows } = await db.query(
    `UPDATE console_sessions SET ended_at = now() WHERE token_hash = $1 AND ended_at IS NULL RETURNING reviewer_id`,
    [tokenHash],
  );
  return rows[0]?.reviewer_id;
}
