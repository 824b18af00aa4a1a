/**
 * Passkey custody: a department moves its wallet to a DepartmentPasskeyAccount whose signers are its reviewers'
 * passkeys, N of M. The platform deploys the account (the reviewed code, from the operator wallet; the deployer
 * gets no power over it) and asks the reviewers to sign the account's key proof; their signature makes the
 * department's wallet change (proposeWalletChange, DEPARTMENT_HELD), which waits the registry's public delay and is
 * activated as any other. Later changes of the account's reviewers are signed by its current reviewers.
 */
import { getAddress, getCreateAddress } from "ethers";
import {
  REVIEWER_CHANGE_DOMAIN_NAME,
  REVIEWER_CHANGE_DOMAIN_VERSION,
  REVIEWER_CHANGE_TYPES,
} from "../../../../abis/index.ts";
import { audit, type RequestMeta } from "../../stores/auditLog.ts";
import {
  accountChangeDigest,
  accountChangeNonce,
  accountReviewers,
  accountThreshold,
  passkeyAccountCreation,
} from "../../chain/passkeyAccounts.ts";
import { AppError, conflict, notFound } from "../errors.ts";
import { departmentOnChain } from "../../reads/departmentReads.ts";
import { rethrowAsApiError } from "../revertMapping.ts";
import { DepartmentStore } from "../../stores/departmentStore.ts";
import {
  activeDepartmentPasskeys,
  hasOpenKeyProof,
  insertPasskeyAccount,
  passkeysByIds,
  passkeysByKeys,
  signingRequestById,
} from "../../stores/signingRequestStore.ts";
import type { DomainContext } from "../context.ts";
import { keyProofToSign } from "../departments/manageDepartments.ts";
import {
  ACCOUNT_SIGNING_SECONDS,
  currentPasskeyAccount,
  openSigningRequest,
  signingRequestView,
  typedDataDigest,
} from "./signingRequests.ts";

/** Most reviewers' passkeys one account holds (DepartmentPasskeyAccount.MAX_REVIEWERS). */
const MAX_ACCOUNT_KEYS = 64;

const viewerOf = (code: string) => ({ kind: "department" as const, id: code, code });

/**
 * Deploys the department's passkey account with every active passkey of its active reviewers and opens the
 * KEY_PROOF signing request; the wallet change follows when `threshold` reviewers have signed it.
 */
export async function startPasskeyCustody(
  context: DomainContext,
  meta: RequestMeta,
  code: string,
  input: { threshold: number },
) {
  const department = await new DepartmentStore(context.pool).byCode(code);
  if (!department) throw notFound("Department");
  if (!(await departmentOnChain(context.pool, code)))
    throw conflict("DEPARTMENT_NOT_REGISTERED", "The department is not registered on chain yet");
  if (await currentPasskeyAccount(context, code))
    throw conflict("ALREADY_PASSKEY_CUSTODY", "The department's wallet is already its passkey account");
  if (await hasOpenKeyProof(context.pool, code))
    throw conflict(
      "CUSTODY_MOVE_IN_PROGRESS",
      "A passkey account of this department is waiting for its reviewers' key proof",
    );
  const passkeys = await activeDepartmentPasskeys(context.pool, code);
  const reviewers = new Set(passkeys.map((p) => p.reviewerId));
  if (reviewers.size < input.threshold)
    throw conflict(
      "NOT_ENOUGH_REVIEWERS",
      `A threshold of ${input.threshold} needs at least as many reviewers with a passkey; the department has ${reviewers.size}`,
      { reviewers: reviewers.size, threshold: input.threshold },
    );
  if (passkeys.length > MAX_ACCOUNT_KEYS)
    throw conflict("TOO_MANY_PASSKEYS", `An account holds at most ${MAX_ACCOUNT_KEYS} passkeys`, {
      passkeys: passkeys.length,
    });
  const keys = passkeys.map((p) => p.publicKey);

  let account = "";
  try {
    const tx = await context.gateway.send(
      {
        kind: "DEPLOY_PASSKEY_ACCOUNT",
        from: context.operator,
        to: null,
        data: passkeyAccountCreation(keys, input.threshold),
      },
      {
        onRecorded: async (client, recorded) => {
          account = getCreateAddress({ from: context.operator, nonce: recorded.nonce });
          await insertPasskeyAccount(client, {
            address: account,
            departmentCode: code,
            threshold: input.threshold,
            chainTxId: recorded.id,
          });
          await audit(client, meta, {
            entityType: "DEPARTMENT",
            entityId: code,
            action: "DEPLOY_PASSKEY_ACCOUNT",
            newValue: { account, threshold: input.threshold, reviewers: keys, passkeys: passkeys.map((p) => p.id) },
            txHash: recorded.hash,
          });
        },
      },
    );
    if (tx.receipt.contractAddress && getAddress(tx.receipt.contractAddress) !== getAddress(account))
      throw new Error(`the account was created at ${tx.receipt.contractAddress}, not ${account}`);
  } catch (error) {
    rethrowAsApiError(error);
  }

  const typed = await keyProofToSign(context, { code, custody: "DEPARTMENT_HELD", walletAddress: account });
  const id = await openSigningRequest(context.pool, meta, {
    departmentCode: code,
    account: account.toLowerCase(),
    kind: "KEY_PROOF",
    digest: typedDataDigest(typed as never),
    threshold: input.threshold,
    expiresAt: new Date(Date.now() + ACCOUNT_SIGNING_SECONDS * 1000),
    payload: { typedData: typed },
  });
  const row = (await signingRequestById(context.pool, id))!;
  return {
    account: { address: getAddress(account), threshold: input.threshold, reviewers: keys },
    signingRequest: await signingRequestView(context, viewerOf(code), row, keys),
  };
}

/**
 * A REVIEWER_CHANGE signing request for the department's passkey account: passkeys to add (active ones of its
 * reviewers), passkeys or keys to remove (removed reviewers' too: that is how they leave the account), and the
 * threshold after the change (default: unchanged), signed by the account's current reviewers.
 */
export async function openReviewerChange(
  context: DomainContext,
  meta: RequestMeta,
  code: string,
  input: { add: string[]; remove: string[]; threshold?: number },
) {
  if (!(await new DepartmentStore(context.pool).byCode(code))) throw notFound("Department");
  const account = await currentPasskeyAccount(context, code);
  if (!account) throw conflict("NOT_PASSKEY_CUSTODY", "The department's registered wallet is not a passkey account");
  const [onChain, current, nonce] = await Promise.all([
    accountReviewers(context.gateway, account),
    accountThreshold(context.gateway, account),
    accountChangeNonce(context.gateway, account),
  ]);

  const added = await passkeysByIds(context.pool, input.add);
  const notAddable = input.add.filter((id) => !added.some((p) => p.id === id && p.active && p.departmentCode === code));
  if (notAddable.length > 0)
    throw new AppError(400, "UNKNOWN_PASSKEYS", "add names passkeys that are not active passkeys of your reviewers", {
      passkeys: notAddable,
    });
  const addKeys = [...new Set(added.map((p) => p.publicKey))];
  const already = addKeys.filter((k) => onChain.includes(k));
  if (already.length > 0)
    throw conflict("REVIEWER_EXISTS", "add names passkeys that are already reviewers of the account", {
      keys: already,
    });

  const namedKeys = input.remove.filter((r) => /^0x[0-9a-fA-F]{128}$/.test(r)).map((k) => k.toLowerCase());
  const namedIds = input.remove.filter((r) => !/^0x[0-9a-fA-F]{128}$/.test(r));
  const byId = await passkeysByIds(context.pool, namedIds);
  const unknownIds = namedIds.filter((id) => !byId.some((p) => p.id === id && p.departmentCode === code));
  if (unknownIds.length > 0)
    throw new AppError(400, "UNKNOWN_PASSKEYS", "remove names passkeys your department never had", {
      passkeys: unknownIds,
    });
  const removeKeys = [...new Set([...namedKeys, ...byId.map((p) => p.publicKey)])];
  const notOn = removeKeys.filter((k) => !onChain.includes(k));
  if (notOn.length > 0)
    throw conflict("REVIEWER_UNKNOWN", "remove names keys that are not reviewers of the account", { keys: notOn });
  if (addKeys.length === 0 && removeKeys.length === 0 && (input.threshold ?? current) === current)
    throw new AppError(400, "VALIDATION_ERROR", "The change changes nothing");

  const remaining = onChain.length - removeKeys.length + addKeys.length;
  const threshold = input.threshold ?? Math.min(current, remaining);
  if (threshold < 1 || threshold > remaining)
    throw new AppError(400, "INVALID_THRESHOLD", `The threshold must be between 1 and ${remaining} reviewers`, {
      threshold,
      reviewers: remaining,
    });
  // Keys of the department's own passkeys only (no stranger's key is put on an account from here).
  const known = await passkeysByKeys(context.pool, removeKeys);
  const deadline = BigInt(Math.floor(Date.now() / 1000) + ACCOUNT_SIGNING_SECONDS);
  const change = { add: addKeys, remove: removeKeys, threshold, nonce, deadline };
  const digest = await accountChangeDigest(context.gateway, account, change);
  const id = await openSigningRequest(context.pool, meta, {
    departmentCode: code,
    account,
    kind: "REVIEWER_CHANGE",
    digest,
    threshold: current,
    expiresAt: new Date(Number(deadline) * 1000),
    payload: {
      change: { ...change, nonce: nonce.toString(), deadline: Number(deadline) },
      // What the reviewers' browsers hash themselves (the console checks it against `digest` before signing).
      typedData: {
        domain: {
          name: REVIEWER_CHANGE_DOMAIN_NAME,
          version: REVIEWER_CHANGE_DOMAIN_VERSION,
          chainId: context.config.chainId,
          verifyingContract: getAddress(account),
        },
        types: REVIEWER_CHANGE_TYPES,
        primaryType: "ReviewerChange",
        message: { ...change, nonce: nonce.toString(), deadline: deadline.toString() },
      },
      removedPasskeys: known.map((p) => ({ passkeyId: p.id, reviewerId: p.reviewerId, publicKey: p.publicKey })),
    },
  });
  return signingRequestView(context, viewerOf(code), (await signingRequestById(context.pool, id))!, onChain);
}
