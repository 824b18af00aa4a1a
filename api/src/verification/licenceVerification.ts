/**
 * Verifying a licence by token id. Whether it is valid comes from the chain itself (LicenceToken.validityOf, the
 * owner, and the standing decisions in ApprovalRegistry.decisionsOf): the index can lag or be wrong, the contracts
 * cannot. Names, numbers and transaction hashes come from the index and the API's rows.
 */
import type pg from "pg";
import type { ChainGateway } from "../chain/chainGateway.ts";
import { ApprovalRegistryDecisionStatus, ApprovalRegistryPhase } from "../../../abis/index.ts";
import { decisionsOf, ownerOf, progressOf, validityOf } from "../chain/contractReads.ts";
import { LICENCE_STATUS_NAMES } from "../chain/contracts.ts";
import type { Deployment } from "../chain/deployment.ts";
import { readTogether } from "../db/readTogether.ts";
import { AppError } from "../errors.ts";
import { departmentCodes } from "../reads/requestReads.ts";
import { licenceMessage, VERDICT_OF_VALIDITY, type LicenceVerdict } from "./verdicts.ts";


export interface VerificationDependencies {
  pool: pg.Pool;
  gateway: Pick<ChainGateway, "call">;
  contracts: Deployment["contracts"];
  chainId: number;
}

export interface LicenceVerification {
  isValid: boolean;
  verdict: LicenceVerdict;
  message: string;
  tokenId: number;
  requestNumber: string | null;
  requestType: string | null;
  status: string;
  applicantName: string | null;
  issuedAt: string | null;
  expiresAt: string | null;
  approvals: { departmentCode: string; departmentName: string; stage: number; approvedAt: string; transactionHash: string }[];
  blockchainProof: { chainId: number; contractAddress: string; tokenId: number; ownerAddress: string; transactionHash: string | null; mintTransactionHash: string | null } | null;
  checkedAt: string;
}

/** Verdicts of a licence that was issued: only these show who holds it and what it is (token ids are sequential). */
export const ISSUED_VERDICTS: ReadonlySet<LicenceVerdict> = new Set(["VALID", "EXPIRED", "SUSPENDED", "REVOKED"]);

export const unknownLicence = () => new AppError(404, "NOT_FOUND", licenceMessage("UNKNOWN"), { verdict: "UNKNOWN" });

export async function verifyLicence(deps: VerificationDependencies, tokenId: bigint): Promise<LicenceVerification> {
  const { gateway, contracts, pool } = deps;
  const token = tokenId.toString();
  // One round of chain calls and reads together; then the decisions of each stage reached.
  const [validityResult, owner, progress, rows] = await Promise.all([
    validityOf(gateway, contracts.LicenceToken, tokenId),
    ownerOf(gateway, contracts.LicenceToken, tokenId).catch(() => null), // reverts for an unknown token
    progressOf(gateway, contracts.ApprovalRegistry, tokenId),
    readTogether(pool, {
      request: { sql: `SELECT request_number, request_type, applicant_name, applicant_id FROM requests WHERE token_id = $1`, params: [token] },
      licence: { sql: `SELECT issued_at, created_tx FROM index.licences WHERE token_id = $1`, params: [token] },
      issuance: {
        sql: `SELECT tx_hash FROM index.licence_status_history WHERE token_id = $1 AND from_status = 'SUBMITTED' AND to_status = 'APPROVED' ORDER BY block_number DESC, log_index DESC LIMIT 1`,
        params: [token],
      },
      decisions: {
        sql: `SELECT DISTINCT ON (a.stage, a.department_id) a.stage, a.department_id, a.tx_hash, a.timestamp, d.code, ad.name
              FROM index.approvals a LEFT JOIN index.departments d ON d.department_id = a.department_id LEFT JOIN departments ad ON ad.code = d.code
              WHERE a.token_id = $1 AND a.decision = 'APPROVED' ORDER BY a.stage, a.department_id, a.block_number DESC, a.log_index DESC`,
        params: [token],
      },
    }),
  ]);
  const { request, licence, issuance, decisions } = rows;
  const [validity, statusCode, , expiresAtSeconds] = validityResult;
  const verdict = VERDICT_OF_VALIDITY[validity];
  if (verdict === "UNKNOWN") throw unknownLicence();
  if (!ISSUED_VERDICTS.has(verdict)) return notIssued(verdict, tokenId, LICENCE_STATUS_NAMES[Number(statusCode)]);
  // The approvals standing on chain now, stage by stage (decisions invalidated by a new document version are gone).
  const standing: { departmentId: number; stage: number }[] = [];
  if (progress.phase !== ApprovalRegistryPhase.NotStarted) {
    const stages = await Promise.all(Array.from({ length: progress.maxStage + 1 }, (_, stage) => decisionsOf(gateway, contracts.ApprovalRegistry, tokenId, stage)));
    stages.forEach(([ids, statuses], stage) => ids.forEach((id, i) => statuses[i] === ApprovalRegistryDecisionStatus.Approved && standing.push({ departmentId: id, stage })));
  }
  const decisionOf = new Map(decisions.map((r) => [`${r.stage}:${r.department_id}`, r]));
  const missing = standing.filter(({ departmentId, stage }) => !decisionOf.get(`${stage}:${departmentId}`)?.code).map((a) => a.departmentId);
  const codes = await departmentCodes(pool, missing); // only when the index lags behind the chain
  const approvals = standing
    .map(({ departmentId, stage }) => {
      const decision = decisionOf.get(`${stage}:${departmentId}`);
      const code = decision?.code ?? codes.get(departmentId) ?? String(departmentId);
      return {
        departmentCode: code,
        departmentName: decision?.name ?? code,
        stage,
        approvedAt: decision ? new Date(Number(decision.timestamp) * 1000).toISOString() : "",
        transactionHash: decision?.tx_hash ?? "",
      };
    })
    .sort((a, b) => a.approvedAt.localeCompare(b.approvedAt) || a.stage - b.stage);

  const row = request[0];
  const issuedAtSeconds = licence[0]?.issued_at;
  const issuedAt = issuedAtSeconds ? new Date(Number(issuedAtSeconds) * 1000) : null;
  const expiresAt = Number(expiresAtSeconds) > 0 ? new Date(Number(expiresAtSeconds) * 1000) : null;
  const status = verdict === "EXPIRED" ? "EXPIRED" : LICENCE_STATUS_NAMES[Number(statusCode)];
  const mintTx = licence[0]?.created_tx ?? null;
  return {
    isValid: verdict === "VALID",
    verdict,
    message: licenceMessage(verdict, { issuedAt, expiresAt, status }),
    tokenId: Number(tokenId),
    requestNumber: row?.request_number ?? null,
    requestType: row?.request_type ?? null,
    status,
    applicantName: row?.applicant_name ?? null, // never the identity-locker id
    issuedAt: issuedAt?.toISOString() ?? null,
    expiresAt: expiresAt?.toISOString() ?? null,
    approvals,
    blockchainProof: {
      chainId: deps.chainId,
      contractAddress: contracts.LicenceToken,
      tokenId: Number(tokenId),
      // ownerOf reverts only for a token that does not exist, which validityOf already answered with UNKNOWN.
      ownerAddress: owner as string,
      transactionHash: issuance[0]?.tx_hash ?? mintTx,
      mintTransactionHash: mintTx,
    },
    checkedAt: new Date().toISOString(),
  };
}

/**
 * A token that is not an issued licence (a draft, a request under review, cancelled or rejected): the verdict and the
 * status only. Who applied, for what, and the owner address (derived from the applicant, so it links one person's
 * requests) stay private; anyone can enumerate token ids.
 */
function notIssued(verdict: LicenceVerdict, tokenId: bigint, status: string): LicenceVerification {
  return {
    isValid: false, verdict, message: licenceMessage(verdict, { status }), tokenId: Number(tokenId), requestNumber: null, requestType: null, status,
    applicantName: null, issuedAt: null, expiresAt: null, approvals: [], blockchainProof: null, checkedAt: new Date().toISOString(),
  };
}
