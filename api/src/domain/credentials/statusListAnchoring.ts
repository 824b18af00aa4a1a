/**
 * Anchors a status list's digests on chain (LicenceToken.anchorStatusList) whenever they differ from its latest
 * anchor: the lists are rebuilt from the index's suspended and revoked licences, the same way they are served, so a
 * verifier who distrusts the platform hashes a served list and compares it with the chain. Idempotent: a list whose
 * anchor already matches sends nothing, and the chain refuses an anchor computed before another one landed
 * (StatusListAnchorOutOfOrder, checked in the simulation, so nothing is recorded).
 */
import { licenceTokenCall } from "../../chain/contractCalls.ts";
import { statusListAnchorOf } from "../../chain/contractReads.ts";
import { hasPendingTransaction } from "../../reads/outboxReads.ts";
import { statusListEntries } from "../../reads/statusListReads.ts";
import type { DomainContext } from "../context.ts";
import { isRevert } from "../revertMapping.ts";
import { buildStatusLists, STATUS_LIST_SIZE, statusListDigest } from "./statusLists.ts";

export type AnchorOutcome =
  | { outcome: "UNCHANGED" }
  | { outcome: "ANCHORED"; sequence: bigint; transactionHash: string; blockNumber: number }
  /** An earlier anchor of this list is still pending in the outbox: try again once reconciliation settles it. */
  | { outcome: "PENDING" }
  /** The list changed again while being anchored, more often than one run follows: run again. */
  | { outcome: "AGAIN" };

/** Comparisons in one run before handing over to a new one (a list under constant change). */
const TURNS_PER_RUN = 3;
const ZERO = `0x${"00".repeat(32)}` as const;

type AnchorContext = Pick<DomainContext, "pool" | "gateway" | "contracts" | "operator">;

/** The three digests of list `list` as the index has it now. */
export async function statusListDigests(context: Pick<DomainContext, "pool">, list: number) {
  const bits = buildStatusLists(list, await statusListEntries(context.pool, list, STATUS_LIST_SIZE));
  return [
    statusListDigest(bits.revocation),
    statusListDigest(bits.suspension),
    statusListDigest(bits.tokenStatus),
  ] as const;
}

export async function anchorStatusList(context: AnchorContext, list: number): Promise<AnchorOutcome> {
  const token = context.contracts.LicenceToken;
  // The calldata of any anchor of this list starts with the selector and the list number.
  const ofThisList = licenceTokenCall("anchorStatusList", [list, 0n, ZERO, ZERO, ZERO]).slice(0, 2 + 8 + 64);
  let last: AnchorOutcome = { outcome: "UNCHANGED" };
  for (let turn = 0; turn < TURNS_PER_RUN; turn++) {
    // At most one pending anchor per list: one sent before a crash or a timeout is settled first.
    if (await hasPendingTransaction(context.pool, "STATUS_LIST_ANCHOR", token, ofThisList))
      return { outcome: "PENDING" };
    // The index first, then the chain: an anchor that lands in between is seen, and its sequence taken.
    const digests = await statusListDigests(context, list);
    const anchor = await statusListAnchorOf(context.gateway, token, list);
    const current = [anchor.revocation, anchor.suspension, anchor.tokenStatus];
    if (anchor.sequence > 0n && digests.every((digest, i) => digest === current[i])) return last;
    try {
      // Waits for its receipt and for the index to reach its block: the next turn sees every change indexed by then.
      const tx = await context.gateway.send({
        kind: "STATUS_LIST_ANCHOR",
        from: context.operator,
        to: token,
        data: licenceTokenCall("anchorStatusList", [list, anchor.sequence + 1n, ...digests]),
      });
      last = {
        outcome: "ANCHORED",
        sequence: anchor.sequence + 1n,
        transactionHash: tx.hash,
        blockNumber: tx.blockNumber,
      };
    } catch (error) {
      // Another process anchored this list since it was read: compare again with that anchor.
      if (!isRevert(error, "StatusListAnchorOutOfOrder")) throw error;
    }
  }
  return { outcome: "AGAIN" };
}
