/**
 * The EIP-712 typed data of a department's decision, exactly as IApprovalRegistry.SignedDecision and
 * DecisionVerifier hash it: a department that holds its own key signs this with any wallet (eth_signTypedData_v4,
 * a hardware wallet, a Safe), and the platform relays it with decideBySig.
 */
import { TypedDataEncoder } from "ethers";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DECISION_TYPES, type Hex } from "../../../../abis/index.ts";

export interface DecisionMessage {
  tokenId: bigint;
  departmentId: number;
  /** IApprovalRegistry.DecisionStatus: 1 Approved, 2 Rejected, 3 ChangesRequested */
  decision: number;
  reasonCode: number;
  reviewedMask: number;
  reviewedVersions: bigint;
  remarksHash: Hex;
  nonce: bigint;
  deadline: bigint;
}

export function decisionDomain(chainId: number, approvalRegistry: string) {
  return { name: DECISION_DOMAIN_NAME, version: DECISION_DOMAIN_VERSION, chainId, verifyingContract: approvalRegistry };
}

/** The typed data as JSON (numbers as decimal strings), ready for eth_signTypedData_v4. */
export function decisionTypedData(chainId: number, approvalRegistry: string, message: DecisionMessage) {
  return {
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
      ],
      ...DECISION_TYPES,
    },
    primaryType: "Decision" as const,
    domain: decisionDomain(chainId, approvalRegistry),
    message: {
      tokenId: message.tokenId.toString(),
      departmentId: message.departmentId,
      decision: message.decision,
      reasonCode: message.reasonCode,
      reviewedMask: message.reviewedMask,
      reviewedVersions: message.reviewedVersions.toString(),
      remarksHash: message.remarksHash,
      nonce: message.nonce.toString(),
      deadline: message.deadline.toString(),
    },
  };
}

/** The digest the department's wallet signs (equal to DecisionVerifier.decisionDigest). */
export function decisionDigest(chainId: number, approvalRegistry: string, message: DecisionMessage): string {
  return TypedDataEncoder.hash(decisionDomain(chainId, approvalRegistry), DECISION_TYPES, message);
}
