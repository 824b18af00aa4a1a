/**
 * Signing requests: one digest (a decision, a key proof, a reviewer change) that a department's passkey account
 * must approve, and the reviewers' WebAuthn assertions over it, collected from the console until the account's
 * threshold is reached; then the platform relays the account's signature (the decision through the decide use
 * case, the key proof as the department's wallet change, the reviewer change to the account itself).
 *
 * An assertion is verified here as a relying party verifies one (challenge = the digest, origin, RP ID, user
 * verification, counter) and must be the signed-in reviewer's own active passkey, a reviewer of the account on
 * chain; the chain checks it again when the signature is relayed. One assertion per reviewer: the account counts
 * keys, the platform counts people.
 */
import { randomUUID } from "node:crypto";
import { getAddress, TypedDataEncoder } from "ethers";
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from "@simplewebauthn/server";
import { audit, audited, type RequestMeta } from "../../stores/auditLog.ts";
import { NotMinedInTimeError } from "../../chain/chainErrors.ts";
import { wasRecorded } from "../../chain/chainGateway.ts";
import type { Principal } from "../../auth/principal.ts";
import type { Tx } from "../../db/queryable.ts";
import { withTransaction } from "../../db/transaction.ts";
import { AppError, conflict, forbidden, notFound } from "../errors.ts";
import { rethrowAsApiError } from "../revertMapping.ts";
import {
  accountReviewers,
  accountThreshold,
  changeReviewersCall,
  type ReviewerChange,
} from "../../chain/passkeyAccounts.ts";
import { anchoredDocumentsOf } from "../../reads/anchoredDocuments.ts";
import { departmentOnChain } from "../../reads/departmentReads.ts";
import { findVisibleRequest } from "../access.ts";
import {
  activeDepartmentPasskeys,
  chainTransactionIdByHash,
  insertAssertion,
  insertSigningRequest,
  markExpired,
  markFailed,
  markSubmitted,
  passkeyAccountsOf,
  passkeysByIds,
  recordPasskeyUse,
  signingRequestById,
  signingRequestStatus,
  signingRequestsOf,
  type ReviewerPasskey,
  type SigningRequestRow,
  type SigningStatus,
} from "../../stores/signingRequestStore.ts";
import { decide, decisionToSign, type Decision } from "../approvals/decide.ts";
import type { DomainContext } from "../context.ts";
import { proposeWalletChange } from "../departments/manageDepartments.ts";
import { isAwaitingGovernance } from "../governance.ts";
import { passkeyInvalid, relyingParty } from "../reviewers/relyingParty.ts";
import {
  accountAssertion,
  AssertionFormatError,
  encodePasskeySignature,
  type AccountAssertion,
} from "./passkeySignature.ts";

type DepartmentPrincipal = Extract<Principal, { kind: "department" }>;

/**
 * How long a decision's reviewers have to sign: its on-chain deadline too (the registry accepts at most a day
 * ahead, counted from the relay, so half a day leaves room for a chain clock behind ours).
 */
export const DECISION_SIGNING_SECONDS = 12 * 60 * 60;
/** How long a key proof or a reviewer change waits for its reviewers (a reviewer change's on-chain deadline too). */
export const ACCOUNT_SIGNING_SECONDS = 24 * 60 * 60;

/** The EIP-712 digest of typed data as handed out (types with EIP712Domain, as eth_signTypedData_v4 takes them). */
export function typedDataDigest(typed: {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}): string {
  const { EIP712Domain: _domain, ...types } = typed.types;
  return TypedDataEncoder.hash(typed.domain, types, typed.message);
}

/** The department's passkey account that is its registered wallet on chain, if that is how it decides. */
export async function currentPasskeyAccount(context: DomainContext, code: string): Promise<string | undefined> {
  const department = await departmentOnChain(context.pool, code);
  if (!department) return undefined;
  const wallet = department.wallet.toLowerCase();
  const accounts = await passkeyAccountsOf(context.pool, code);
  return accounts.some((a) => a.address === wallet) ? wallet : undefined;
}

/** Opens a signing request over `digest` (inside the caller's database transaction when `client` is given). */
export async function openSigningRequest(
  client: Tx | DomainContext["pool"],
  meta: RequestMeta,
  request: {
    departmentCode: string;
    account: string;
    kind: SigningRequestRow["kind"];
    requestId?: string;
    digest: string;
    payload: Record<string, unknown>;
    threshold: number;
    createdBy?: string;
    expiresAt: Date;
  },
): Promise<string> {
  const id = randomUUID();
  await insertSigningRequest(client, { id, ...request, accountAddress: request.account });
  await audit(client, meta, {
    entityType: "DEPARTMENT",
    entityId: request.departmentCode,
    action: "OPEN_SIGNING_REQUEST",
    newValue: { signingRequestId: id, kind: request.kind, account: request.account, digest: request.digest },
  });
  return id;
}

/**
 * A DECISION signing request: the decision's EIP-712 typed data for the department's passkey account (as
 * decisionToSign resolves it now: stage, round, documents, nonce), with a deadline long enough for N reviewers.
 */
export async function openDecisionSigning(
  context: DomainContext,
  meta: RequestMeta,
  requestId: string,
  decision: Decision,
) {
  const principal = meta.principal as DepartmentPrincipal;
  const account = await currentPasskeyAccount(context, principal.code);
  if (!account)
    throw conflict(
      "NOT_PASSKEY_CUSTODY",
      "Your department's registered wallet is not its passkey account: decide with approve / reject / request-changes",
    );
  const toSign = await decisionToSign(context, principal, requestId, decision, DECISION_SIGNING_SECONDS);
  const request = await findVisibleRequest(context.pool, principal, requestId);
  const documents = await anchoredDocumentsOf(context.pool, request.tokenId);
  const digest = typedDataDigest(toSign.typedData as never);
  const threshold = await accountThreshold(context.gateway, account);
  const id = await openSigningRequest(context.pool, meta, {
    departmentCode: principal.code,
    account,
    kind: "DECISION",
    requestId,
    digest,
    threshold,
    createdBy: principal.reviewerId,
    expiresAt: new Date(toSign.deadline * 1000),
    payload: {
      decision,
      typedData: toSign.typedData,
      nonce: toSign.nonce,
      deadline: toSign.deadline,
      stage: toSign.stage,
      round: toSign.round,
      documentVersions: toSign.documentVersions,
      documents: Object.entries(toSign.documentVersions).map(([documentId, version]) => ({
        documentId,
        version,
        sha256: documents.find((d) => d.documentId === documentId)?.hashes.get(version) ?? null,
      })),
    },
  });
  return signingRequestView(context, principal, (await signingRequestById(context.pool, id))!);
}

/** What a reviewer sees of a signing request: what is signed, who signed, which of their passkeys may sign. */
export async function signingRequestView(
  context: DomainContext,
  viewer: DepartmentPrincipal,
  row: SigningRequestRow,
  onChainReviewers?: string[],
) {
  const status = signingRequestStatus(row);
  let allowCredentials: string[] = [];
  if (status === "COLLECTING" && viewer.reviewerId && !row.signatures.some((s) => s.reviewerId === viewer.reviewerId)) {
    const keys = onChainReviewers ?? (await accountReviewers(context.gateway, row.accountAddress));
    allowCredentials = (await activeDepartmentPasskeys(context.pool, row.departmentCode))
      .filter((p) => p.reviewerId === viewer.reviewerId && keys.includes(p.publicKey))
      .map((p) => p.id);
  }
  return {
    id: row.id,
    kind: row.kind,
    status,
    ...(row.requestId ? { requestId: row.requestId } : {}),
    account: getAddress(row.accountAddress),
    digest: row.digest,
    challenge: Buffer.from(row.digest.slice(2), "hex").toString("base64url"),
    threshold: row.threshold,
    signatures: row.signatures.map((s) => ({
      reviewerId: s.reviewerId,
      reviewerName: s.reviewerName,
      passkeyId: s.passkeyId,
      signedAt: s.signedAt.toISOString(),
    })),
    allowCredentials,
    summary: {
      ...summaryOf(row),
      ...(row.kind === "KEY_PROOF" ? { reviewers: await accountReviewersShown(context, row, onChainReviewers) } : {}),
    },
    typedData: row.payload.typedData,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    ...(row.transactionHash ? { transactionHash: row.transactionHash } : {}),
    ...(row.failure ? { failure: row.failure } : {}),
    ...(row.payload.result ? { result: row.payload.result } : {}),
  };
}

/**
 * Who the account a key proof consents to would let sign: its reviewers on chain, each named when it is a passkey of
 * this department's reviewers. Whoever deployed the account chose them, so a reviewer sees them before signing.
 */
async function accountReviewersShown(context: DomainContext, row: SigningRequestRow, onChain?: string[]) {
  const keys = onChain?.length ? onChain : await accountReviewers(context.gateway, row.accountAddress);
  const known = new Map(
    (await activeDepartmentPasskeys(context.pool, row.departmentCode)).map((p) => [p.publicKey, p] as const),
  );
  return keys.map((publicKey) => {
    const passkey = known.get(publicKey);
    return passkey
      ? { publicKey, reviewerName: passkey.reviewerName, deviceName: passkey.deviceName }
      : { publicKey, reviewerName: null, deviceName: null };
  });
}

/** What the reviewers are asked to approve, in words they can check. */
function summaryOf(row: SigningRequestRow): Record<string, unknown> {
  const p = row.payload;
  if (row.kind === "DECISION")
    return {
      decision: p.decision.kind,
      remarks: p.decision.remarks,
      ...(p.decision.reason ? { reason: p.decision.reason } : {}),
      ...(p.decision.requiredDocuments ? { requiredDocuments: p.decision.requiredDocuments } : {}),
      documents: p.documents,
      stage: p.stage,
      nonce: p.nonce,
      deadline: p.deadline,
    };
  if (row.kind === "KEY_PROOF")
    return { departmentCode: row.departmentCode, wallet: getAddress(row.accountAddress), custody: "DEPARTMENT_HELD" };
  return {
    add: p.change.add,
    remove: p.change.remove,
    threshold: p.change.threshold,
    nonce: p.change.nonce,
    deadline: p.change.deadline,
  };
}

/** The signing request `id` as `viewer` (its department) may see it; 404 for another department's. */
export async function getSigningRequest(context: DomainContext, viewer: DepartmentPrincipal, id: string) {
  const row = await signingRequestById(context.pool, id);
  if (!row || row.departmentCode !== viewer.code) throw notFound("Signing request");
  return signingRequestView(context, viewer, row);
}

export async function listSigningRequests(
  context: DomainContext,
  viewer: DepartmentPrincipal,
  filter: { status?: SigningStatus; limit: number },
) {
  const rows = await signingRequestsOf(context.pool, viewer.code, filter);
  const reviewersByAccount = new Map<string, Promise<string[]>>();
  const reviewersOf = (account: string) => {
    if (!reviewersByAccount.has(account)) reviewersByAccount.set(account, accountReviewers(context.gateway, account));
    return reviewersByAccount.get(account)!;
  };
  return Promise.all(
    rows.map(async (row) =>
      signingRequestView(
        context,
        viewer,
        row,
        signingRequestStatus(row) === "COLLECTING" ? await reviewersOf(row.accountAddress) : [],
      ),
    ),
  );
}

/**
 * A reviewer's assertion over the signing request's digest. Verified and stored; when it completes the threshold,
 * the account's signature is relayed in the same database transaction (the request's row stays locked, so two
 * last signatures arriving together relay once). A relay the chain refuses as stale (the review moved on, the
 * nonce was used, a document changed) marks the request FAILED and answers the use case's 409.
 */
export async function addAssertion(
  context: DomainContext,
  meta: RequestMeta,
  signingRequestId: string,
  response: AuthenticationResponseJSON,
) {
  const principal = meta.principal as DepartmentPrincipal;
  if (!principal.reviewerId) throw forbidden("Only a reviewer signed in to the console signs with a passkey");
  const rp = relyingParty(context.config);
  const outcome = await withTransaction(context.pool, async (client) => {
    const row = await signingRequestById(client, signingRequestId, { forUpdate: true });
    if (!row) throw notFound("Signing request");
    if (row.departmentCode !== principal.code) throw forbidden("This signing request is another department's");
    const status = signingRequestStatus(row);
    if (status !== "COLLECTING") {
      if (status === "EXPIRED") await markExpired(client, row.id);
      return {
        error: conflict("SIGNING_REQUEST_CLOSED", `This signing request is ${status}: it takes no more signatures`, {
          status,
        }),
      };
    }
    const [passkey] = await passkeysByIds(client, [String(response?.id ?? "")]);
    if (passkey && passkey.reviewerId !== principal.reviewerId)
      throw forbidden("This passkey is another reviewer's: sign with your own");
    if (!passkey || !passkey.active)
      throw passkeyInvalid(400, "This passkey is not an active passkey of a reviewer of your department");
    const onChain = await accountReviewers(context.gateway, row.accountAddress);
    if (!onChain.includes(passkey.publicKey))
      throw passkeyInvalid(400, "This passkey is not a reviewer of your department's passkey account on chain");
    if (row.signatures.some((s) => s.reviewerId === principal.reviewerId))
      return { error: conflict("ALREADY_SIGNED", "You have already signed this request") };

    const assertion = await verifiedAssertion(rp, passkey, response, row.digest);
    await recordPasskeyUse(client, passkey.id, assertion.newCounter);
    await insertAssertion(client, {
      signingRequestId: row.id,
      passkeyId: passkey.id,
      reviewerId: passkey.reviewerId,
      assertion: assertion.account,
    });
    await audit(client, meta, {
      entityType: "DEPARTMENT",
      entityId: row.departmentCode,
      action: "SIGN_SIGNING_REQUEST",
      newValue: { signingRequestId: row.id, kind: row.kind, passkeyId: passkey.id, reviewerId: passkey.reviewerId },
    });
    const approvals = [
      ...row.signatures.map((s) => ({ key: s.publicKey, assertion: s.assertion as unknown as AccountAssertion })),
      { key: passkey.publicKey, assertion: assertion.account },
    ];
    if (approvals.length < row.threshold) return { error: undefined };
    try {
      const relayed = await relay(context, meta, row, encodePasskeySignature(approvals));
      await markSubmitted(client, row.id, relayed);
      await audit(client, meta, {
        entityType: "DEPARTMENT",
        entityId: row.departmentCode,
        action: "SUBMIT_SIGNING_REQUEST",
        newValue: { signingRequestId: row.id, kind: row.kind, signatures: approvals.length },
      });
      return { error: undefined };
    } catch (error) {
      if (wasRecorded(error)) {
        // The relay is in the outbox and may still be mined (reconciliation finishes it): submitted, not failed.
        const hash = error instanceof NotMinedInTimeError ? error.transactionHash : undefined;
        const chainTxId = hash ? ((await chainTransactionIdByHash(client, hash)) ?? null) : null;
        await markSubmitted(client, row.id, { chainTxId, result: { pending: true } });
        return { error };
      }
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      const failure = {
        code: error.code,
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
      };
      await markFailed(client, row.id, failure);
      await audit(client, meta, {
        entityType: "DEPARTMENT",
        entityId: row.departmentCode,
        action: "FAIL_SIGNING_REQUEST",
        newValue: { signingRequestId: row.id, kind: row.kind, failure },
      });
      return { error };
    }
  });
  if (outcome.error) throw outcome.error;
  return signingRequestView(context, principal, (await signingRequestById(context.pool, signingRequestId))!);
}

/** The assertion verified as a relying party verifies it, in the account's form; 400 PASSKEY_INVALID otherwise. */
async function verifiedAssertion(
  rp: ReturnType<typeof relyingParty>,
  passkey: ReviewerPasskey,
  response: AuthenticationResponseJSON,
  digest: string,
): Promise<{ account: AccountAssertion; newCounter: number }> {
  let verification;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: Buffer.from(digest.slice(2), "hex").toString("base64url"),
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: true,
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(passkey.cosePublicKey),
        counter: passkey.signCount,
        transports: passkey.transports as never,
      },
    });
  } catch (error) {
    throw passkeyInvalid(400, `The passkey's assertion was refused: ${(error as Error).message}`);
  }
  if (!verification.verified) throw passkeyInvalid(400, "The passkey's signature is not valid");
  try {
    return { account: accountAssertion(response, digest), newCounter: verification.authenticationInfo.newCounter };
  } catch (error) {
    if (error instanceof AssertionFormatError) throw passkeyInvalid(400, error.message);
    throw error;
  }
}

/** Sends the account's signature where the request's kind goes; the outbox id and what the use case answered. */
async function relay(
  context: DomainContext,
  meta: RequestMeta,
  row: SigningRequestRow,
  signature: string,
): Promise<{ chainTxId: string | null; result?: unknown }> {
  const p = row.payload;
  if (row.kind === "DECISION") {
    const decision = { ...(p.decision as Decision), documentVersions: p.documentVersions };
    const answer = await decide(context, meta, row.requestId!, decision, {
      signature,
      nonce: p.nonce,
      deadline: p.deadline,
      stage: p.stage,
      round: p.round,
    });
    return {
      chainTxId: (await chainTransactionIdByHash(context.pool, answer.transactionHash)) ?? null,
      result: answer,
    };
  }
  if (row.kind === "KEY_PROOF") {
    const proposed = await proposeWalletChange(context, meta, row.departmentCode, {
      custody: "DEPARTMENT_HELD",
      walletAddress: row.accountAddress,
      keyProof: signature,
    });
    if (isAwaitingGovernance(proposed)) return { chainTxId: null, result: proposed };
    return {
      chainTxId: (await chainTransactionIdByHash(context.pool, proposed.transactionHash)) ?? null,
      result: {
        transactionHash: proposed.transactionHash,
        pendingWalletChange: proposed.department.pendingWalletChange,
      },
    };
  }
  const change = p.change as { add: string[]; remove: string[]; threshold: number; nonce: string; deadline: number };
  const onChain: ReviewerChange = { ...change, nonce: BigInt(change.nonce), deadline: BigInt(change.deadline) };
  try {
    const tx = await context.gateway.send(
      {
        kind: "PASSKEY_REVIEWER_CHANGE",
        from: context.operator,
        to: row.accountAddress,
        data: changeReviewersCall(onChain, signature),
      },
      audited(meta, {
        entityType: "DEPARTMENT",
        entityId: row.departmentCode,
        action: "CHANGE_PASSKEY_REVIEWERS",
        newValue: { account: row.accountAddress, ...change },
      }),
    );
    return { chainTxId: tx.id, result: { transactionHash: tx.hash } };
  } catch (error) {
    rethrowAsApiError(error);
  }
}
