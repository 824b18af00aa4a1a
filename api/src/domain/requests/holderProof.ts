/**
 * Proving a licence is yours without the chain naming you: the applicant reads the salt of their request's
 * commitment (only they may), and shows their identity-locker id and that salt to whoever verifies; the verifier
 * recomputes keccak256(salt ‖ id) and compares it with the commitment in the token's LicenceMinted event, read from
 * the chain itself.
 */
import { ZeroHash } from "ethers";
import type { Principal } from "../../auth/principal.ts";
import { licenceToken } from "../../chain/contracts.ts";
import { AppError, notFound } from "../errors.ts";
import { mintBlockOf } from "../../reads/licenceMintReads.ts";
import { findVisibleRequest } from "../access.ts";
import { identitySaltOf } from "../../stores/requestStore.ts";
import type { DomainContext } from "../context.ts";
import { applicantCommitment } from "./applicantCommitment.ts";

/** The applicant's own proof material; nobody else (not even an administrator) gets the salt. */
export async function identityProof(context: DomainContext, principal: Principal | undefined, requestId: string) {
  const request = await findVisibleRequest(context.pool, principal, requestId);
  if (principal?.kind !== "applicant" || principal.id !== request.applicantId) {
    throw new AppError(403, "FORBIDDEN", "Only the applicant gets the salt that proves the licence is theirs");
  }
  const salt = await identitySaltOf(context.pool, request.id);
  if (!salt)
    throw new AppError(409, "NO_COMMITMENT", "This request was minted before applicant commitments were recorded");
  return {
    requestId: request.id,
    tokenId: Number(request.tokenId),
    applicantId: request.applicantId,
    salt,
    commitment: applicantCommitment(salt, request.applicantId),
  };
}

/** Whether `applicantId` and `salt` open the commitment recorded on chain when `tokenId` was minted. */
export async function checkHolder(
  context: Pick<DomainContext, "pool" | "gateway" | "contracts">,
  tokenId: bigint,
  applicantId: string,
  salt: string,
) {
  const block = await mintBlockOf(context.pool, tokenId);
  if (block === undefined) throw notFound("Licence");
  // The commitment comes from the chain's own log of the mint (the index only says which block to look in).
  const logs = await context.gateway.provider.getLogs({
    address: context.contracts.LicenceToken,
    topics: licenceToken.encodeFilterTopics("LicenceMinted", [tokenId]),
    fromBlock: block,
    toBlock: block,
  });
  if (logs.length !== 1) throw notFound("Licence");
  const onChain: string = licenceToken.parseLog(logs[0])!.args.applicantCommitment;
  const presented = applicantCommitment(salt, applicantId);
  return {
    tokenId: Number(tokenId),
    matches: onChain !== ZeroHash && presented === onChain,
    commitment: onChain,
    mintTransactionHash: logs[0].transactionHash,
  };
}
