/**
 * The job runner on its own: `npm run worker` (run the API with JOBS_IN_API=false then). Same configuration as the
 * API; any number of workers and APIs may run jobs at once. Stops cleanly on SIGINT/SIGTERM: takes no new jobs,
 * waits for the running ones, exits.
 */
import { assertConfiguredSecrets, describeConfig, loadConfig, readEnvFile } from "./config.ts";
import { jobClock } from "./jobs/jobClock.ts";
import { startJobRunner } from "./jobs/jobRunner.ts";
import { createLogger } from "./observability/logger.ts";
import { logUnhandledRejections } from "./observability/processErrors.ts";
import { createDomainContext, createProcessServices } from "./services.ts";

readEnvFile();
const config = loadConfig();
// The same refusals as the API's, before anything could generate a secret.
assertConfiguredSecrets(config);
const logger = createLogger(config.logLevel).child({ process: "worker" });
logUnhandledRejections(logger);
logger.info({ config: describeConfig(config) }, "starting worker");

const core = await createProcessServices(config, logger);
const context = await createDomainContext(config, logger, core);
const jobs = await startJobRunner(context, {
  index: core.index,
  pollMs: config.jobPollMs,
  lockMs: config.jobLockMs,
  concurrency: config.jobConcurrency,
  clock: jobClock(config.jobTimeScale),
});
process.send?.({ type: "ready" });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "stopping worker");
  await jobs.stop().catch(() => {});
  await core.close().catch(() => {});
  // Agenda's lock watchdogs hold timers for a while after stopping: nothing is left to do, so leave now.
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
