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
