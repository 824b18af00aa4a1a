/**
 * The EIP-712 typed data a department wallet signs, exactly as IApprovalRegistry.Decision and DecisionVerifier hash
 * it, in the registry's domain as its eip712Domain() (EIP-5267) gives it: name, version, chain id, the registry's
 * address and the deployment's salt. A department that holds its own key signs a decision with any wallet
 * (eth_signTypedData_v4, a hardware wallet, a Safe), and the platform relays it with decideBySig; every department
 * wallet signs a DepartmentKey proof of possession when governance registers it.
 */
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES, type Hex } from "../../../../abis/index.ts";
import { eip712Domain } from "../../chain/contractReads.ts";
import type { DomainContext } from "../context.ts";

export interface DecisionMessage {
  tokenId: bigint;
  departmentId: number;
  /** The stage decided in (progressOf.stage). */
  stage: number;
  /** The stage's round: its start time (progressOf.stageStartedAt). */
  round: number;
  /** IApprovalRegistry.DecisionStatus: 1 Approved, 2 Rejected, 3 ChangesRequested */
  decision: number;
  reasonCode: number;
  reviewedMask: number;
  /** SHA-256 of each reviewed document's latest version, by ascending document index. */
  documents: Hex[];
  remarksHash: Hex;
  nonce: bigint;
  deadline: bigint;
}

export interface RegistryDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
  salt: Hex;
}

const EIP712_DOMAIN_TYPE = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
  { name: "salt", type: "bytes32" },
];

/** A deployment's domain never changes: asked of the registry once per process. */
const domains = new Map<string, Promise<RegistryDomain>>();

/** The registry's EIP-712 domain, from its eip712Domain() (the salt is per deployment, set at construction). */
export function registryDomain(context: Pick<DomainContext, "gateway" | "contracts">): Promise<RegistryDomain> {
  const registry = context.contracts.ApprovalRegistry;
  let domain = domains.get(registry);
  if (!domain) {
    domain = eip712Domain(context.gateway, registry).then(([, name, version, chainId, verifyingContract, salt]) => ({
      name,
      version,
      chainId: Number(chainId),
      verifyingContract,
      salt,
    }));
    domain.catch(() => domains.delete(registry));
    domains.set(registry, domain);
  }
  return domain;
}

/** The decision's typed data as JSON (numbers as decimal strings), ready for eth_signTypedData_v4. */
export function decisionTypedData(domain: RegistryDomain, message: DecisionMessage) {
  return {
    types: { EIP712Domain: EIP712_DOMAIN_TYPE, ...DECISION_TYPES },
    primaryType: "Decision" as const,
    domain,
    message: {
      tokenId: message.tokenId.toString(),
      departmentId: message.departmentId,
      stage: message.stage,
      round: message.round,
      decision: message.decision,
      reasonCode: message.reasonCode,
      reviewedMask: message.reviewedMask,
      documents: message.documents,
      remarksHash: message.remarksHash,
      nonce: message.nonce.toString(),
      deadline: message.deadline.toString(),
    },
  };
}

/** DepartmentKey(bytes32 code,address wallet,uint8 custody): a department wallet's proof that it holds its key. */
export interface DepartmentKeyMessage {
  code: Hex;
  wallet: string;
  custody: number;
}

/** The key proof's typed data as JSON, ready for eth_signTypedData_v4 (or a Safe's signMessage flow). */
export function departmentKeyTypedData(domain: RegistryDomain, message: DepartmentKeyMessage) {
  return {
    types: { EIP712Domain: EIP712_DOMAIN_TYPE, ...DEPARTMENT_KEY_TYPES },
    primaryType: "DepartmentKey" as const,
    domain,
    message,
  };
}
