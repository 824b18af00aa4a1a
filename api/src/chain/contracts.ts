/** The three contracts as ethers Interfaces (from the generated ABIs), with call encoding and log decoding. */
import { Interface, type Log, type LogDescription } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../../abis/index.ts";

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

/** A UUID as the bytes16 the contracts store. */
export const uuidToBytes16 = (uuid: string) => `0x${uuid.replace(/-/g, "")}`;

/** A bytes16 from the contracts (0x + 32 hex digits) as the UUID it encodes. */
export function bytes16ToUuid(bytes16: string): string {
  const hex = bytes16.slice(2).toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The contracts' enums as decoded values (bigint), by name: contracts/interfaces/*.sol. */
export const LICENCE_STATUS = { Draft: 1n, Submitted: 2n, PendingResubmission: 3n, Approved: 4n, Rejected: 5n, Cancelled: 6n, Suspended: 7n, Revoked: 8n } as const;
/** LicenceToken.Status names as the API shows them, by enum index. */
export const LICENCE_STATUS_NAMES = ["NONE", "DRAFT", "SUBMITTED", "PENDING_RESUBMISSION", "APPROVED", "REJECTED", "CANCELLED", "SUSPENDED", "REVOKED"] as const;
export const REVIEW_PHASE = { NotStarted: 0n, InReview: 1n, AwaitingResubmission: 2n, Escalated: 3n, Closed: 4n } as const;
export const DECISION = { Pending: 0n, Approved: 1n, Rejected: 2n, ChangesRequested: 3n, ReviewRequired: 4n } as const;
export const TIMEOUT_ACTION = { None: 0n, Notify: 1n, Escalate: 2n, AutoReject: 3n } as const;

/** Whether the current stage of a request's progress has a timeout still to act on (Progress.flags bit 0: acted). */
export const timeoutPending = (progress: { phase: bigint; flags: bigint }) => progress.phase === REVIEW_PHASE.InReview && (progress.flags & 1n) === 0n;
