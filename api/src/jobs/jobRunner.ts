/**
 * The job runner: Agenda 6 on our Postgres (table agenda_jobs, created by migration 008). It runs in the API
 * process by default, or alone with `npm run worker`; any number of runners share the table, and Agenda's
 * `FOR UPDATE SKIP LOCKED` locking gives each due job to one of them.
 *
 * Jobs:
 * - derive-events: turn a confirmed transaction into platform events and webhook deliveries (events/);
 * - deliver-webhook: one delivery's attempts and retry schedule (webhooks/deliveryJob.ts);
 * - stage-timeout: a stage's deadline (domain/approvals/enforceTimeout.ts);
 * - discard-files: files of document versions whose anchoring reverted (domain/documents/discardUnanchoredFiles.ts);
 * - anchor-status-list: a status list's digests on chain after a licence's status changed (statusListAnchors.ts).
 */
import os from "node:os";
import { PostgresBackend } from "@agendajs/postgres-backend";
import { Agenda, type Job } from "agenda";
import type { Logger } from "pino";
import type { DomainContext } from "../domain/context.ts";
import { enforceStageTimeout, type StageDeadline } from "../domain/approvals/enforceTimeout.ts";
import { discardUnanchoredFiles } from "../domain/documents/discardUnanchoredFiles.ts";
import { deriveEvents } from "../events/deriveEvents.ts";
import { runDelivery } from "../webhooks/deliveryJob.ts";
import { webhookAddressPolicy } from "../webhooks/urlSafety.ts";
import type { JobClock } from "./jobClock.ts";
import { JOB_NAMES, JOBS_CHANNEL } from "./jobQueue.ts";
import { type IndexWatch, runStatusListAnchor, watchStatusChanges } from "./statusListAnchors.ts";

export interface JobRunnerOptions {
  pollMs: number;
  /**
   * The index's progress: events are released once the index shows their transaction, and its new blocks are
   * watched for changes of licence status.
   */
  index: IndexWatch;
  /** How long a job stays locked to a runner that may have died. */
  lockMs: number;
  concurrency: number;
  clock: JobClock;
}

export interface JobRunner {
  /** Stops taking jobs and waits (up to `timeoutMs`) for the running ones to finish. */
  stop(timeoutMs?: number): Promise<void>;
}

type RunnerContext = Pick<
  DomainContext,
  "pool" | "gateway" | "contracts" | "operator" | "workflows" | "webhookSecrets" | "config" | "logger" | "documentStore"
>;

/** Errors a job throws are retried after these delays: never given up, since an event must not be lost. */
const retryAfter =
  (maxMs: number) =>
  ({ attempt }: { attempt: number }) =>
    Math.min(maxMs, 1_000 * 2 ** Math.min(attempt, 20));

export async function startJobRunner(context: RunnerContext, options: JobRunnerOptions): Promise<JobRunner> {
  const logger: Logger = context.logger.child({ component: "jobs" });
  const agenda = createAgenda(context, options, logger);
  defineJobs(agenda, context, options, logger);
  await agenda.start();
  const statusWatch = watchStatusChanges({ ...context, logger }, options.index);
  logger.info({ pollMs: options.pollMs }, "job runner started");
  return {
    async stop(timeoutMs = 15_000) {
      statusWatch.stop();
      await agenda.drain({ timeout: timeoutMs, closeConnection: false });
    },
  };
}

/** Agenda on the agenda_jobs table, woken by the jobs channel, its errors and failures logged. */
function createAgenda(context: RunnerContext, options: JobRunnerOptions, logger: Logger): Agenda {
  const backend = new PostgresBackend({
    pool: context.pool,
    tableName: "agenda_jobs",
    channelName: JOBS_CHANNEL,
    ensureSchema: false,
  });
  // The LISTEN connection reconnects by itself when Postgres restarts, but reports the loss as an 'error' event:
  // unheard, that would end the process.
  backend.notificationChannel?.on("error", (error: Error) =>
    logger.warn({ err: error.message }, "job notifications interrupted; reconnecting"),
  );
  const agenda = new Agenda({
    backend,
    name: `${os.hostname()}:${process.pid}`,
    processEvery: options.pollMs,
    maxConcurrency: options.concurrency * 3,
    defaultConcurrency: options.concurrency,
    removeOnComplete: true,
  });
  agenda.on("error", (error: Error) => logger.error({ err: error }, "job runner error"));
  agenda.on("fail", (error: Error, job: Job) =>
    logger.warn({ job: job.attrs.name, err: error.message, attempt: job.attrs.failCount }, "job failed; retrying"),
  );
  return agenda;
}

/**
 * What the deliver-webhook job runs for one delivery, under the same address policy as registration and test
 * deliveries (urlSafety.ts webhookAddressPolicy): loopback only with DEV_CONVENIENCES, whatever NODE_ENV says.
 */
export function webhookDeliveryRun(
  context: Pick<RunnerContext, "pool" | "webhookSecrets" | "config">,
  clock: JobClock,
  logger: Logger,
): (deliveryId: string) => ReturnType<typeof runDelivery> {
  const deps = {
    pool: context.pool,
    secrets: context.webhookSecrets,
    clock,
    production: webhookAddressPolicy(context.config).production,
    logger,
  };
  return (deliveryId) => runDelivery(deps, deliveryId);
}

/** Each job: what it runs, how long its lock lasts and when a failed run is retried. */
function defineJobs(agenda: Agenda, context: RunnerContext, options: JobRunnerOptions, logger: Logger): void {
  agenda.define(
    JOB_NAMES.deriveEvents,
    async (job: Job<{ txId: string }>) => {
      const result = await deriveEvents(
        { ...context, provider: context.gateway.provider, index: options.index },
        job.attrs.data.txId,
      );
      if (result.events > 0) logger.debug({ txId: job.attrs.data.txId, ...result }, "events derived");
    },
    { backoff: retryAfter(60_000), lockLifetime: options.lockMs },
  );

  const deliverWebhook = webhookDeliveryRun(context, options.clock, logger);
  agenda.define(
    JOB_NAMES.deliverWebhook,
    async (job: Job<{ deliveryId: string }>) => {
      const result = await deliverWebhook(job.attrs.data.deliveryId);
      if (result.retryAt) job.schedule(result.retryAt);
    },
    // An attempt takes at most 10 s: the lock outlives it by far, so a live attempt is never taken over.
    { backoff: retryAfter(60_000), lockLifetime: Math.max(options.lockMs, 15_000) },
  );

  agenda.define(
    JOB_NAMES.stageTimeout,
    async (job: Job<StageDeadline>) => {
      const result = await enforceStageTimeout(context, job.attrs.data);
      if (result.outcome === "NOT_YET") job.schedule(new Date(Math.max(result.retryAt.getTime(), Date.now() + 1_000)));
      else
        logger.info(
          { tokenId: job.attrs.data.tokenId, stage: job.attrs.data.stage, ...result },
          "stage deadline handled",
        );
    },
    // Sends a transaction and waits for its receipt and the index.
    {
      backoff: retryAfter(30_000),
      lockLifetime: Math.max(
        options.lockMs,
        context.config.receiptTimeoutMs + context.config.readYourWritesTimeoutMs + 5_000,
      ),
      concurrency: 2,
    },
  );

  agenda.define(
    JOB_NAMES.anchorStatusList,
    (job: Job<{ list: number }>) => runStatusListAnchor(context, job, logger),
    // Sends a transaction and waits for its receipt and the index, up to three times in a run.
    {
      backoff: retryAfter(30_000),
      lockLifetime: Math.max(
        options.lockMs,
        3 * (context.config.receiptTimeoutMs + context.config.readYourWritesTimeoutMs) + 5_000,
      ),
    },
  );

  agenda.define(
    JOB_NAMES.discardFiles,
    async (job: Job<{ txId: string }>) => void (await discardUnanchoredFiles(context, job.attrs.data.txId)),
    { backoff: retryAfter(300_000), lockLifetime: options.lockMs },
  );
}
