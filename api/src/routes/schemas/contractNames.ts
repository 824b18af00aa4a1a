/**
 * The API's public names for what the contracts enumerate. Where the API's name is the contract's, it is taken from
 * abis/enums.ts (generated from the interfaces), never written again; where the API differs by design, the
 * differences are here and only here. test/unit/contractNames.test.ts pins the public lists, so a contract enum
 * that changes without the API deciding how to follow fails there.
 */
import {
  ApprovalRegistryCompletionNames,
  ApprovalRegistryCustodyNames,
  ApprovalRegistryDecisionStatusNames,
  ApprovalRegistryExecutionTypeNames,
  ApprovalRegistryRejectionActionNames,
  type ApprovalRegistryResetCauseName,
  ApprovalRegistryTimeoutActionNames,
  LicenceTokenStatusNames,
} from "../../../../abis/index.ts";

/** `names` without the members `left`, keeping the declaration order (and the member types). */
function without<const T extends readonly string[], const X extends T[number]>(names: T, ...left: X[]) {
  return names.filter((name): name is Exclude<T[number], X> => !(left as readonly string[]).includes(name));
}

// The same names as the contracts.
export const EXECUTION_TYPES = ApprovalRegistryExecutionTypeNames;
export const COMPLETION_CRITERIA = ApprovalRegistryCompletionNames;
export const REJECTION_ACTIONS = ApprovalRegistryRejectionActionNames;
export const APPROVAL_STATUSES = ApprovalRegistryDecisionStatusNames;
export const CUSTODY_KINDS = ApprovalRegistryCustodyNames;

// The differences, by design.
/** onTimeout: NONE is a stage without timeoutDays, which the API says by leaving both out. */
export const TIMEOUT_ACTIONS = without(ApprovalRegistryTimeoutActionNames, "NONE");
/** The licence token's statuses but NONE (no token: no request), plus EXPIRED: APPROVED past expiresAt, computed. */
export const REQUEST_STATUSES = [...without(LicenceTokenStatusNames, "NONE"), "EXPIRED"] as const;
/**
 * approvals[].invalidationReason for decisions a DecisionsReset cleared: the contract's ResetCause name, except an
 * escalation sent back to the department, which the API has called ESCALATION_SENT_BACK since before the contract
 * named its cause EscalationReturned. (A document update's reason, DOCUMENT_UPDATED, is the index's own.)
 */
const RESET_CAUSE_PUBLIC_NAMES: Partial<Record<ApprovalRegistryResetCauseName, string>> = {
  ESCALATION_RETURNED: "ESCALATION_SENT_BACK",
};

/** The API's invalidationReason for the reason an index row records. */
export function publicInvalidationReason(indexed: string): string {
  return RESET_CAUSE_PUBLIC_NAMES[indexed as ApprovalRegistryResetCauseName] ?? indexed;
}
