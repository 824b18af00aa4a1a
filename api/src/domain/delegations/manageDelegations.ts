/**
 * Applicants' delegations to system clients. A system client (client credentials) acts for an applicant, and sees
 * their requests, only while the applicant's delegation to it is live: the applicant grants it with their own token,
 * lists and revokes it. A system client lists the applicants who delegated to it. Every grant and revocation is
 * audited in its own transaction.
 */
import { audit, type RequestMeta } from "../../stores/auditLog.ts";
import type { Principal } from "../../auth/principal.ts";
import type { DbPool } from "../../db/queryable.ts";
import { withTransaction } from "../../db/transaction.ts";
import { notFound } from "../errors.ts";
import * as store from "../../stores/delegationStore.ts";

type Applicant = Extract<Principal, { kind: "applicant" }>;

export interface DelegationJson {
  applicantId: string;
  applicantName: string | null;
  clientId: string;
  clientName: string;
  scopes: string[];
  grantedAt: string;
}

const toJson = (d: store.Delegation): DelegationJson => ({ ...d, grantedAt: d.grantedAt.toISOString() });

/**
 * The applicant delegates to the client (or renews the delegation with their current name and e-mail, which the
 * client's requests publish). An unknown, revoked or administrator client is 404: a client id is no secret of the
 * applicant's to probe.
 */
export async function grantDelegation(
  pool: DbPool,
  meta: RequestMeta & { principal: Applicant },
  clientId: string,
): Promise<{ delegation: DelegationJson; renewed: boolean }> {
  const applicant = meta.principal;
  const client = await store.delegableClient(pool, clientId);
  if (!client) throw notFound("System client");
  const { grantedAt, renewed } = await withTransaction(pool, async (tx) => {
    const granted = await store.grantDelegation(tx, {
      applicantId: applicant.id,
      clientId,
      applicantName: applicant.name ?? null,
      applicantEmail: applicant.email ?? null,
    });
    await audit(tx, meta, {
      entityType: "APPLICANT",
      entityId: applicant.id,
      action: "DELEGATE",
      newValue: { clientId, scopes: client.scopes, renewed: granted.renewed },
    });
    return granted;
  });
  return {
    delegation: toJson({
      applicantId: applicant.id,
      applicantName: applicant.name ?? null,
      clientId,
      clientName: client.name,
      scopes: client.scopes,
      grantedAt,
    }),
    renewed,
  };
}

/** Ends the applicant's delegation to the client at once (404 when there is none). */
export async function revokeDelegation(
  pool: DbPool,
  meta: RequestMeta & { principal: Applicant },
  clientId: string,
): Promise<void> {
  const applicantId = meta.principal.id;
  await withTransaction(pool, async (tx) => {
    if (!(await store.revokeDelegation(tx, applicantId, clientId))) throw notFound("Delegation");
    await audit(tx, meta, {
      entityType: "APPLICANT",
      entityId: applicantId,
      action: "REVOKE_DELEGATION",
      oldValue: { clientId },
    });
  });
}

/** An applicant's live delegations; for a system client, the live delegations to it. */
export async function listDelegations(pool: DbPool, principal: Principal): Promise<DelegationJson[]> {
  if (principal.kind === "applicant") return (await store.delegationsOfApplicant(pool, principal.id)).map(toJson);
  if (principal.kind === "client") return (await store.delegationsToClient(pool, principal.id)).map(toJson);
  return [];
}
