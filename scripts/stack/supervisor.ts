/**
 * The supervisor `npm start` runs (scripts/start.ts launches it in its own process group): the whole platform on
 * embedded defaults (or on DATABASE_URL / CHAIN_RPC_URL when set), until SIGINT/SIGTERM or until its launcher goes
 * away. Prints one block when ready; child logs go to DATA_DIR/logs (STACK_ECHO=true copies them here).
 */
// Ctrl-C during start-up stops whatever was already started: listen before loading anything heavy.
const starting = new AbortController();
const abortStart = () => starting.abort();
process.once("SIGINT", abortStart);
process.once("SIGTERM", abortStart);
process.once("disconnect", abortStart);

const started = Date.now();
console.log("Starting the licence approval platform…");
const { readEnvFile } = await import("../../api/src/config.ts");
readEnvFile();
const { startStack } = await import("./stack.ts");
const { StackAlreadyRunning } = await import("./stackLock.ts");
let stack: Awaited<ReturnType<typeof startStack>>;
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
process.off("SIGINT", abortStart);
process.off("SIGTERM", abortStart);
process.off("disconnect", abortStart);

const { readyBlock } = await import("./readyBlock.ts");
console.log(readyBlock(stack, (Date.now() - started) / 1000).join("\n"));

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping (chain state is saved)…`);
  await stack.stop();
  console.log("Stopped.");
  process.exit(0);
};
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
// The launcher is gone (killed, or its terminal closed): nobody is left to press Ctrl-C, so stop now.
process.on("disconnect", () => void shutdown("launcher gone"));
