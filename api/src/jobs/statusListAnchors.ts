/**
 * anchor-status-list: one job per status list (key `list:N`, so at most one runs per list across runners), which
 * anchors the list's digests when they differ from its latest anchor (domain/credentials/statusListAnchoring.ts).
 *
 * What enqueues it: every job runner watches the index. On each indexed block (Ponder's notification, through
 * IndexProgress) it asks which lists a licence was issued, suspended, reinstated or revoked in since its last look,
 * and enqueues their jobs; at start, and when the index goes back (a chain restarted from an older state), every list
 * holding an issued licence. The index rather than our own transactions: a change made with a key the platform does
 * not hold (governance suspending directly, a department-held wallet's final approval) is anchored too.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Job } from "agenda";
import type { Logger } from "pino";
import type { IndexWaiter } from "../chain/chainGateway.ts";
import type { DomainContext } from "../domain/context.ts";
import { anchorStatusList } from "../domain/credentials/statusListAnchoring.ts";
import { STATUS_LIST_SIZE } from "../domain/credentials/statusLists.ts";
import type { IndexStatus } from "../reads/indexProgress.ts";
import { statusListsChangedAfter, statusListsInUse } from "../reads/statusListReads.ts";
import { enqueueJob, JOB_NAMES } from "./jobQueue.ts";

export interface IndexWatch extends IndexWaiter {
  status(): Promise<IndexStatus | undefined>;
}

/** How long a wait for the next indexed block lasts before the index is read again anyway. */
const IDLE_WAIT_MS = 10_000;
/** A list whose job was running when it changed is enqueued again this soon (the running job may have read before). */
const BUSY_RETRY_MS = 250;

/** The job's run: anchors list `list`, then schedules itself again when it has to wait or could not finish. */
export async function runStatusListAnchor(
  context: Pick<DomainContext, "pool" | "gateway" | "contracts" | "operator">,
  job: Job<{ list: number }>,
  logger: Logger,
): Promise<void> {
  const { list } = job.attrs.data;
  const result = await anchorStatusList(context, list);
  // A pending anchor is settled by the outbox's reconciliation, every 2 s.
  if (result.outcome === "PENDING") job.schedule(new Date(Date.now() + 2_000));
  else if (result.outcome === "AGAIN") job.schedule(new Date());
  else if (result.outcome === "ANCHORED")
    logger.info(
      { list, sequence: result.sequence.toString(), tx: result.transactionHash, block: result.blockNumber },
      "status list anchored",
    );
}

/** Starts the watcher; `stop` ends it (at its next wake-up, within IDLE_WAIT_MS). */
export function watchStatusChanges(
  context: Pick<DomainContext, "pool" | "logger">,
  index: IndexWatch,
): { stop(): void } {
  let stopped = false;
  const waiting = new Set<number>(); // lists to enqueue, whose job was running when last tried
  let seen: number | undefined; // the last indexed block whose changes were enqueued

  const turn = async () => {
    const status = await index.status();
    if (!status) return void (await sleep(1_000));
    const lists =
      seen === undefined || status.block < seen
        ? await statusListsInUse(context.pool, STATUS_LIST_SIZE)
        : status.block > seen
          ? await statusListsChangedAfter(context.pool, seen, STATUS_LIST_SIZE)
          : [];
    for (const list of lists) waiting.add(list);
    for (const list of waiting) {
      if (await enqueueJob(context.pool, JOB_NAMES.anchorStatusList, `list:${list}`, { list })) waiting.delete(list);
    }
    seen = status.block;
    await index.waitForBlock(seen + 1, waiting.size > 0 ? BUSY_RETRY_MS : IDLE_WAIT_MS);
  };

  void (async () => {
    while (!stopped) {
      await turn().catch(async (error: unknown) => {
        if (stopped) return;
        context.logger.warn({ err: (error as Error).message }, "status list watch interrupted; retrying");
        await sleep(1_000);
      });
    }
  })();
  return {
    stop() {
      stopped = true;
    },
  };
}
