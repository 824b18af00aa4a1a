/** The three contracts as ethers Interfaces (from the generated ABIs), with call encoding and log decoding. */
import { Interface, type Log, type LogDescription } from "ethers";
import {
  ApprovalRegistryAbi,
  ApprovalRegistryCustodyNames,
  type ApprovalRegistryCustodyName,
  ApprovalRegistryDecisionStatus,
  ApprovalRegistryPhase,
  ApprovalRegistryProgressFlag,
  ApprovalRegistryTimeoutAction,
  bigintEnum,
  DocumentRegistryAbi,
  LicenceTokenAbi,
  LicenceTokenStatus,
  LicenceTokenStatusNames,
} from "../../../abis/index.ts";

export const licenceToken = new Interface(LicenceTokenAbi as never);
export const documentRegistry = new Interface(DocumentRegistryAbi as never);
export const approvalRegistry = new Interface(ApprovalRegistryAbi as never);

/** Events of `iface` emitted by `address` in these logs, decoded. */
export function eventsOf(logs: readonly Log[], iface: Interface, address: string, name: string): LogDescription[] {
  const topic = iface.getEvent(name)!.topicHash;
  return logs
    .filter((log) => log.address.toLowerCase() === address.toLowerCase() && log.topics[0] === topic)
    .map((log) => iface.parseLog(log)!);
}

/** UUID <-> bytes16, as abis/codec.ts (generated) defines them for every reader of the contracts. */
export { bytes16ToUuid, uuidToBytes16 } from "../../../abis/index.ts";

// The contracts' enums (abis/enums.ts, generated from the interfaces) as the bigints ethers decodes.
export const LICENCE_STATUS = bigintEnum(LicenceTokenStatus);
/** LicenceToken.Status names as the API shows them, by enum index. */
export const LICENCE_STATUS_NAMES = LicenceTokenStatusNames;
export const REVIEW_PHASE = bigintEnum(ApprovalRegistryPhase);
export const DECISION = bigintEnum(ApprovalRegistryDecisionStatus);
export const TIMEOUT_ACTION = bigintEnum(ApprovalRegistryTimeoutAction);
/** IApprovalRegistry.Custody names, by enum index. */
export const CUSTODY_NAMES = ApprovalRegistryCustodyNames;
export type CustodyName = ApprovalRegistryCustodyName;
// Names by enum index, for the enums the API sends in workflow stages and reads as validity.
export {
  ApprovalRegistryCompletionNames as COMPLETION_NAMES,
  ApprovalRegistryDecisionStatusNames as DECISION_NAMES,
  ApprovalRegistryExecutionTypeNames as EXECUTION_TYPE_NAMES,
  ApprovalRegistryRejectionActionNames as REJECTION_ACTION_NAMES,
  ApprovalRegistryTimeoutActionNames as TIMEOUT_ACTION_NAMES,
  enumValueOf,
  LicenceTokenValidityNames as VALIDITY_NAMES,
} from "../../../abis/index.ts";

/** Whether the current stage of a request's progress has a timeout still to act on (not TimeoutHandled yet). */
export const timeoutPending = (progress: { phase: bigint | number; flags: bigint | number }) =>
  Number(progress.phase) === ApprovalRegistryPhase.InReview &&
  (Number(progress.flags) & ApprovalRegistryProgressFlag.TimeoutHandled) === 0;
