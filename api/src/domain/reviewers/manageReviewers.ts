/**
 * A department's reviewers: invited by the department (its API key) or an administrator, listed with their
 * passkeys, removed (with their passkeys and sessions). An invitation is a one-time link whose token is shown once
 * and kept only as its sha256; it is valid for 72 hours. Every change is audited (entity REVIEWER).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { audit, type RequestMeta } from "../../stores/auditLog.ts";
import { isAdmin, type Principal } from "../../auth/principal.ts";
import type { DbPool } from "../../db/queryable.ts";
import { withTransaction } from "../../db/transaction.ts";
import { forbidden, notFound } from "../errors.ts";
import { DepartmentStore } from "../../stores/departmentStore.ts";
import * as store from "../../stores/reviewerStore.ts";

export const INVITATION_SECONDS = 72 * 60 * 60;

export const invitationTokenHash = (token: string) => createHash("sha256").update(token).digest("hex");

export interface PasskeyJson {
  id: string;
  deviceName: string;
  publicKey: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface ReviewerJson {
  id: string;
  name: string;
  createdAt: string;
  invitation: { expiresAt: string; used: boolean } | null;
  passkeys: PasskeyJson[];
}

export const passkeyJson = (p: store.ReviewerPasskey): PasskeyJson => ({
  id: p.id,
  deviceName: p.deviceName,
  publicKey: p.publicKey,
  createdAt: p.createdAt.toISOString(),
  lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
});

/**
 * The department's own API key or an administrator (a console session never manages reviewers); 404 when the
 * department is not registered.
 */
async function managedDepartment(pool: DbPool, principal: Principal | undefined, departmentCode: string) {
  const own = principal?.kind === "department" && principal.code === departmentCode && !principal.reviewerId;
  if (!own && !isAdmin(principal))
    throw forbidden("Only the department (its API key) or an administrator manages its reviewers");
  const department = await new DepartmentStore(pool).byCode(departmentCode);
  if (!department) throw notFound("Department");
  return department;
}

const invitedBy = (principal: Principal | undefined) =>
  principal?.kind === "department" ? `department:${principal.code}` : `client:${principal?.id ?? "platform"}`;

export async function inviteReviewer(
  pool: DbPool,
  meta: RequestMeta,
  input: { departmentCode: string; name: string; consoleOrigin: string },
): Promise<{ reviewerId: string; invitationId: string; invitationUrl: string; expiresAt: string }> {
  await managedDepartment(pool, meta.principal, input.departmentCode);
  const token = randomBytes(32).toString("base64url");
  const invitationId = randomUUID();
  const expiresAt = new Date(Date.now() + INVITATION_SECONDS * 1000);
  const reviewer = await withTransaction(pool, async (tx) => {
    const reviewer = await store.insertReviewer(tx, {
      id: randomUUID(),
      departmentCode: input.departmentCode,
      name: input.name,
      invitedBy: invitedBy(meta.principal),
    });
    await store.insertInvitation(tx, {
      id: invitationId,
      reviewerId: reviewer.id,
      tokenHash: invitationTokenHash(token),
      expiresAt,
    });
    await audit(tx, meta, {
      entityType: "REVIEWER",
      entityId: reviewer.id,
      action: "INVITE",
      newValue: { departmentCode: input.departmentCode, name: input.name, invitationId, expiresAt },
    });
    return reviewer;
  });
  return {
    reviewerId: reviewer.id,
    invitationId,
    invitationUrl: `${input.consoleOrigin}/console/#/invite/${token}`,
    expiresAt: expiresAt.toISOString(),
  };
}

export async function listReviewers(
  pool: DbPool,
  principal: Principal | undefined,
  departmentCode: string,
): Promise<ReviewerJson[]> {
  await managedDepartment(pool, principal, departmentCode);
  const reviewers = await store.activeReviewersOf(pool, departmentCode);
  const ids = reviewers.map((r) => r.id);
  const invitations = await store.latestInvitations(pool, ids);
  const passkeys = await store.activePasskeysOf(pool, ids);
  return reviewers.map((reviewer) => {
    const invitation = invitations.get(reviewer.id);
    return {
      id: reviewer.id,
      name: reviewer.name,
      createdAt: reviewer.createdAt.toISOString(),
      invitation: invitation
        ? { expiresAt: invitation.expiresAt.toISOString(), used: invitation.usedAt !== null }
        : null,
      passkeys: passkeys.filter((p) => p.reviewerId === reviewer.id).map(passkeyJson),
    };
  });
}

/**
 * Removes the reviewer off chain: their passkeys stop signing in and signing at once and their sessions end. A key
 * on the department's passkey account leaves it only by a reviewer change signed on chain.
 */
export async function removeReviewer(
  pool: DbPool,
  meta: RequestMeta,
  departmentCode: string,
  reviewerId: string,
): Promise<void> {
  await managedDepartment(pool, meta.principal, departmentCode);
  await withTransaction(pool, async (tx) => {
    const passkeys = await store.activePasskeysOf(tx, [reviewerId]);
    if (!(await store.removeReviewer(tx, departmentCode, reviewerId))) throw notFound("Reviewer");
    await audit(tx, meta, {
      entityType: "REVIEWER",
      entityId: reviewerId,
      action: "REMOVE",
      oldValue: { departmentCode, passkeys: passkeys.map((p) => ({ id: p.id, publicKey: p.publicKey })) },
    });
  });
}

export async function removePasskey(
  pool: DbPool,
  meta: RequestMeta,
  departmentCode: string,
  reviewerId: string,
  passkeyId: string,
): Promise<void> {
  await managedDepartment(pool, meta.principal, departmentCode);
  await withTransaction(pool, async (tx) => {
    const removed = await store.removePasskey(tx, departmentCode, reviewerId, passkeyId);
    if (!removed) throw notFound("Passkey");
    await audit(tx, meta, {
      entityType: "REVIEWER",
      entityId: reviewerId,
      action: "REMOVE_PASSKEY",
      oldValue: { departmentCode, passkeyId, ...removed },
    });
  });
}
