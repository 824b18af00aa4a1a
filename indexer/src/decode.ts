/**
 * Pure decoders shared by the handlers: packed on-chain values to the strings the tables hold.
 * Enum arrays follow the Solidity declaration order in contracts/interfaces/*.sol.
 */
import { type Hex, hexToBytes, keccak256, toHex } from "viem";

/** ILicenceToken.Status */
export const LICENCE_STATUS = [
  "NONE",
  "DRAFT",
  "SUBMITTED",
  "PENDING_RESUBMISSION",
  "APPROVED",
  "REJECTED",
  "CANCELLED",
  "SUSPENDED",
  "REVOKED",
] as const;
/** IDocumentRegistry.Phase */
export const DOCUMENT_PHASE = ["UNOPENED", "OPEN", "REVIEW", "LOCKED"] as const;
/** IApprovalRegistry.ExecutionType */
export const EXECUTION_TYPE = ["SEQUENTIAL", "PARALLEL"] as const;
/** IApprovalRegistry.Completion */
export const COMPLETION = ["ALL", "ANY", "THRESHOLD"] as const;
/** IApprovalRegistry.TimeoutAction */
export const TIMEOUT_ACTION = ["NONE", "NOTIFY", "ESCALATE", "AUTO_REJECT"] as const;
/** IApprovalRegistry.RejectionAction */
export const REJECTION_ACTION = ["FAIL_REQUEST", "RETRY_STAGE", "ESCALATE"] as const;
/** IApprovalRegistry.Phase */
export const REVIEW_PHASE = ["NOT_STARTED", "IN_REVIEW", "AWAITING_RESUBMISSION", "ESCALATED", "CLOSED"] as const;
/** IApprovalRegistry.DecisionStatus */
export const DECISION = ["PENDING", "APPROVED", "REJECTED", "CHANGES_REQUESTED", "REVIEW_REQUIRED"] as const;
/** IApprovalRegistry.EscalationCause */
export const ESCALATION_CAUSE = ["REJECTION", "TIMEOUT"] as const;
/** IApprovalRegistry.Custody */
export const CUSTODY = ["CUSTODIAL", "DEPARTMENT_HELD"] as const;

/** Name of enum value `value`; `UNKNOWN_<n>` for a value the contracts do not define (never thrown on). */
export function enumName(names: readonly string[], value: number | bigint): string {
  return names[Number(value)] ?? `UNKNOWN_${value}`;
}

export const licenceStatus = (value: number) => enumName(LICENCE_STATUS, value);

/** bytes32 holding a right-padded string (ethers encodeBytes32String) -> the string, trailing NULs removed. */
export function bytes32ToString(value: Hex): string {
  const bytes = hexToBytes(value);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** bytes16 -> UUID text 8-4-4-4-12, lower case. */
export function bytes16ToUuid(value: Hex): string {
  const hex = value.slice(2).toLowerCase().padStart(32, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Stage.departmentIds: 16 bits per position, `count` positions. */
export function unpackDepartmentIds(packed: bigint, count: number): number[] {
  const ids: number[] = [];
  for (let p = 0; p < count; p++) ids.push(Number((packed >> BigInt(16 * p)) & 0xffffn));
  return ids;
}

/** Roles.sol plus OpenZeppelin's DEFAULT_ADMIN_ROLE: role hash -> name. */
const ROLE_NAMES = new Map<string, string>([
  [toHex(0, { size: 32 }), "DEFAULT_ADMIN_ROLE"],
  ...["ADMIN_ROLE", "OPERATOR_ROLE", "KEEPER_ROLE"].map(
    (name) => [keccak256(toHex(name)), name] as [string, string],
  ),
]);

/** Name of a role hash, or the hash itself for a role the contracts do not define. */
export function roleName(role: Hex): string {
  return ROLE_NAMES.get(role.toLowerCase()) ?? role.toLowerCase();
}

/** JSON-safe copy: bigints as decimal strings, hex (addresses, hashes) lower case; nested values included. */
export function jsonSafe(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string" && /^0x[0-9a-fA-F]*$/.test(value)) return value.toLowerCase();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  }
  return value;
}
