/** A stable UUID for an on-chain fact (e.g. "txHash-logIndex"), so the same event always has the same id. */
import { createHash } from "node:crypto";
import { bytes16ToUuid } from "../../../abis/index.ts";

export function stableUuid(name: string): string {
  const bytes = createHash("sha256").update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50; // version 5 layout (name-based)
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  return bytes16ToUuid(`0x${bytes.toString("hex")}`);
}
