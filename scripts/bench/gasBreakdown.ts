/**
 * Where a transaction's gas went, from the node's own trace (`debug_traceTransaction`, struct logs): the intrinsic
 * cost (21,000 and calldata), new storage slots, rewrites of existing slots, storage reads (counting the cold ones),
 * events, cross-contract calls (their own cost: cold account, call frame; the callee's work is counted by opcode),
 * and the rest of execution (hashing included), less the refund. Every opcode is charged what the EVM took for it,
 * so the parts add up to the receipt's gasUsed (checked).
 */
import { getBytes } from "ethers";

export const GAS_PARTS = ["intrinsic", "newSlots", "slotRewrites", "reads", "events", "calls", "execution"] as const;
/** Gas and count per part; `refund` is what the parts spent beyond gasUsed. */
export type GasBreakdown = Record<(typeof GAS_PARTS)[number], { gas: number; count: number }> & { refund: number };

export const emptyBreakdown = (): GasBreakdown => ({
  ...(Object.fromEntries(GAS_PARTS.map((p) => [p, { gas: 0, count: 0 }])) as Omit<GasBreakdown, "refund">),
  refund: 0,
});

interface StructLog {
  op: string;
  gas: number;
  gasCost: number;
  depth: number;
}

/** The gas each step was charged: the drop to the next step of the same frame, or what the call itself cost. */
function charged(logs: StructLog[], i: number): number {
  const [step, next] = [logs[i], logs[i + 1]];
  if (!next || next.depth < step.depth) return step.gasCost; // the frame's last step
  if (next.depth === step.depth) return step.gas - next.gas;
  // Entering a callee: the op's cost less what it forwarded (the callee's steps are counted themselves).
  return step.gasCost - next.gas;
}

/** The part an opcode's gas belongs to, and whether it counts as one (of new slots, cold reads, events, calls). */
function partOf(op: string, gas: number): [(typeof GAS_PARTS)[number], boolean] {
  // London: 20,000 to set a zero slot (+ 2,100 when cold); a rewrite is 2,900 (+ 2,100 cold) or 100.
  if (op === "SSTORE") return [gas >= 20_000 ? "newSlots" : "slotRewrites", true];
  if (op === "SLOAD") return ["reads", gas >= 2_100];
  if (op.startsWith("LOG")) return ["events", true];
  if (["CALL", "STATICCALL", "DELEGATECALL", "CALLCODE"].includes(op)) return ["calls", true];
  return ["execution", false];
}

export async function gasBreakdown(
  send: (method: string, params: unknown[]) => Promise<any>,
  tx: { hash: string; data: string; gasUsed: bigint },
): Promise<GasBreakdown> {
  const { structLogs: logs } = (await send("debug_traceTransaction", [tx.hash])) as { structLogs: StructLog[] };
  const parts = emptyBreakdown();
  parts.intrinsic.gas = 21_000 + [...getBytes(tx.data)].reduce((sum, byte) => sum + (byte === 0 ? 4 : 16), 0);
  for (let i = 0; i < logs.length; i++) {
    const gas = charged(logs, i);
    const [part, counted] = partOf(logs[i].op, gas);
    parts[part].gas += gas;
    if (counted) parts[part].count += 1;
  }
  parts.refund = GAS_PARTS.reduce((sum, p) => sum + parts[p].gas, 0) - Number(tx.gasUsed);
  if (parts.refund < 0)
    throw new Error(`gas breakdown of ${tx.hash} is ${-parts.refund} short of gasUsed ${tx.gasUsed}`);
  return parts;
}
