/**
 * Where a transaction's gas went, from the node's own trace (`debug_traceTransaction`, struct logs): the intrinsic
 * cost (21,000 and calldata), new storage slots, rewrites of existing slots, storage reads (cold and warm), events,
 * cross-contract calls (their own cost: cold account, call frame; the callee's work is counted by opcode), hashing,
 * and the rest of execution, less the refund. Every opcode is charged what the EVM took for it, so the parts add
 * up to the receipt's gasUsed (checked).
 */
import { getBytes } from "ethers";

interface StructLog {
  op: string;
  gas: number;
  gasCost: number;
  depth: number;
}

export interface GasBreakdown {
  intrinsic: number;
  newSlots: number;
  newSlotCount: number;
  slotRewrites: number;
  slotRewriteCount: number;
  reads: number;
  coldReadCount: number;
  events: number;
  eventCount: number;
  calls: number;
  callCount: number;
  hashing: number;
  execution: number;
  refund: number;
}

const CALLS = new Set(["CALL", "STATICCALL", "DELEGATECALL", "CALLCODE"]);

/** The gas each step was charged: the drop to the next step of the same frame, or what the call itself cost. */
function charged(logs: StructLog[], i: number): number {
  const step = logs[i];
  const next = logs[i + 1];
  if (!next || next.depth < step.depth) return step.gasCost; // the frame's last step
  if (next.depth === step.depth) return step.gas - next.gas;
  // Entering a callee: the op's cost less what it forwarded (the callee's steps are counted themselves).
  return step.gasCost - next.gas;
}

function calldataGas(data: string): number {
  return [...getBytes(data)].reduce((sum, byte) => sum + (byte === 0 ? 4 : 16), 0);
}

export async function gasBreakdown(
  send: (method: string, params: unknown[]) => Promise<any>,
  tx: { hash: string; data: string; gasUsed: bigint },
): Promise<GasBreakdown> {
  const trace = (await send("debug_traceTransaction", [tx.hash])) as { structLogs: StructLog[] };
  const logs = trace.structLogs;
  const b: GasBreakdown = {
    intrinsic: 21_000 + calldataGas(tx.data),
    newSlots: 0,
    newSlotCount: 0,
    slotRewrites: 0,
    slotRewriteCount: 0,
    reads: 0,
    coldReadCount: 0,
    events: 0,
    eventCount: 0,
    calls: 0,
    callCount: 0,
    hashing: 0,
    execution: 0,
    refund: 0,
  };
  for (let i = 0; i < logs.length; i++) {
    const { op } = logs[i];
    const gas = charged(logs, i);
    if (op === "SSTORE") {
      // London: 20,000 to set a zero slot (+ 2,100 when cold); a rewrite is 2,900 (+ 2,100 cold) or 100.
      if (gas >= 20_000) {
        b.newSlots += gas;
        b.newSlotCount += 1;
      } else {
        b.slotRewrites += gas;
        b.slotRewriteCount += 1;
      }
    } else if (op === "SLOAD") {
      b.reads += gas;
      if (gas >= 2_100) b.coldReadCount += 1;
    } else if (op.startsWith("LOG")) {
      b.events += gas;
      b.eventCount += 1;
    } else if (CALLS.has(op)) {
      b.calls += gas;
      b.callCount += 1;
    } else if (op === "KECCAK256" || op === "SHA3") {
      b.hashing += gas;
    } else {
      b.execution += gas;
    }
  }
  const spent = b.intrinsic + b.newSlots + b.slotRewrites + b.reads + b.events + b.calls + b.hashing + b.execution;
  b.refund = spent - Number(tx.gasUsed);
  if (b.refund < 0) throw new Error(`gas breakdown of ${tx.hash} is ${-b.refund} short of gasUsed ${tx.gasUsed}`);
  return b;
}
