/**
 * Pure decoders shared by the handlers: packed on-chain values to the strings the tables hold.
 * Enum names and codecs come from abis/ (generated from the compiled contracts), never copied here.
 */
import type { Hex } from "viem";
import { LicenceTokenStatusNames, roleNameOf } from "../../abis/index.ts";

// The contracts' enum names by value, generated from the interfaces into abis/enums.ts.
export {
  ApprovalRegistryCompletionNames as COMPLETION,
  ApprovalRegistryCustodyNames as CUSTODY,
  ApprovalRegistryDecisionStatusNames as DECISION,
  ApprovalRegistryEscalationCauseNames as ESCALATION_CAUSE,
  ApprovalRegistryExecutionTypeNames as EXECUTION_TYPE,
  ApprovalRegistryPhaseNames as REVIEW_PHASE,
  ApprovalRegistryRejectionActionNames as REJECTION_ACTION,
  ApprovalRegistryResetCauseNames as RESET_CAUSE,
  ApprovalRegistryTimeoutActionNames as TIMEOUT_ACTION,
  LicenceTokenStatusNames as LICENCE_STATUS,
} from "../../abis/index.ts";
// bytes16 -> UUID and bytes32 -> text, as abis/codec.ts defines them for every reader of the contracts.
export { bytes16ToUuid, bytes32ToString } from "../../abis/index.ts";

/** Name of enum value `value`; `UNKNOWN_<n>` for a value the contracts do not define (never thrown on). */
export function enumName(names: readonly string[], value: number | bigint): string {
  return names[Number(value)] ?? `UNKNOWN_${value}`;
}

export const licenceStatus = (value: number) => enumName(LicenceTokenStatusNames, value);

/** Stage.departmentIds: 16 bits per position, `count` positions. */
export function unpackDepartmentIds(packed: bigint, count: number): number[] {
  const ids: number[] = [];
  for (let p = 0; p < count; p++) ids.push(Number((packed >> BigInt(16 * p)) & 0xffffn));
  return ids;
}

/** Name of a role id (abis/roles.ts), or the id itself for a role the contracts do not define. */
export function roleName(role: Hex): string {
  return roleNameOf(role) ?? role.toLowerCase();
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
