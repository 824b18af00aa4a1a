/**
 * The supervisor `npm start` runs (scripts/start.ts launches it in its own process group): the whole platform on
 * embedded defaults (or on DATABASE_URL / CHAIN_RPC_URL when set), until SIGINT/SIGTERM or until its launcher goes
 * away. Prints one block when ready; child logs go to DATA_DIR/logs (STACK_ECHO=true copies them here).
 */
import type { Stack } from "./stack.ts";

// Listening before loading anything heavy: a stop order during start-up stops whatever was already started.
const starting = new AbortController();
let stack: Stack | undefined;
let stopping = false;
const stop = async (reason: string) => {
  if (!stack) return starting.abort();
  if (stopping) return;
  stopping = true;
  console.log(`\n${reason}: stopping (chain state is saved)…`);
  await stack.stop();
  console.log("Stopped.");
  process.exit(0);
};
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));
// The launcher is gone (killed, or its terminal closed): nobody is left to press Ctrl-C, so stop now.
process.on("disconnect", () => void stop("launcher gone"));

const started = Date.now();
console.log("Starting the licence approval platform…");
const { readEnvFile } = await import("../../api/src/config.ts");
readEnvFile();
const { startStack } = await import("./stack.ts");
const { StackAlreadyRunning } = await import("./stackLock.ts");
try {
  stack = await startStack({
    echo: process.env.STACK_ECHO === "true",
    log: (line) => console.log(`  ${line}`),
    signal: starting.signal,
  });
} catch (error) {
  if (error instanceof StackAlreadyRunning) {
    console.error(`\n${error.message}`);
    process.exit(1);
  }
  console.error(
    starting.signal.aborted ? "\nStopped during start-up." : `\nCould not start: ${(error as Error).message}`,
  );
  process.exit(starting.signal.aborted ? 0 : 1);
}
const { readyBlock } = await import("./readyBlock.ts");
console.log(readyBlock(stack, (Date.now() - started) / 1000).join("\n"));
