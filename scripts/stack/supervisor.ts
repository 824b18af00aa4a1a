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

const { config, api } = stack;
const lines = [
  "",
  `Licence approval platform is running (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  `  API          ${api.url}/api/v1   (${stack.apis.length} API process${stack.apis.length === 1 ? "" : "es"}${config.workerProcesses ? `, ${config.workerProcesses} worker${config.workerProcesses === 1 ? "" : "s"}` : ""})`,
  `  Verify       ${api.url}/verify   (anyone: a licence by number or QR code, a document by its hash)`,
  `  API docs     ${api.url}/docs   (OpenAPI: ${api.url}/api/v1/openapi.json)`,
  `  Health       ${api.url}/health`,
  `  Chain RPC    ${stack.rpcUrl}   (chain ${config.chainId}${stack.chain ? ", embedded anvil" : ""})`,
  `  Indexer      ${stack.indexer?.url ?? "not started here"}`,
  `  Contracts    LicenceToken ${stack.deployment.contracts.LicenceToken}`,
  `               DocumentRegistry ${stack.deployment.contracts.DocumentRegistry}`,
  `               ApprovalRegistry ${stack.deployment.contracts.ApprovalRegistry}`,
  `  Data         ${config.dataDir}   (logs in ${config.dataDir}/logs)`,
  ...(config.devConveniences
    ? [
        "  Development  DEV_CONVENIENCES=true: passwordless development sign-in and generated secrets are ON (local use only, never real data)",
      ]
    : []),
  "  Admin client (client credentials, scope admin; paste these lines into a shell for the README walkthrough):",
  `ID=${stack.admin.clientId}`,
  `SECRET=${stack.admin.clientSecret}`,
  `API=${api.url}/api/v1`,
  "Press Ctrl-C to stop.",
];
console.log(lines.join("\n"));

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
