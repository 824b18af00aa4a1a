/**
 * `npm start`: the whole platform on embedded defaults (or on DATABASE_URL / CHAIN_RPC_URL when set), until
 * Ctrl-C. Prints one block when ready; child logs go to DATA_DIR/logs (STACK_ECHO=true copies them here).
 */
// Ctrl-C during start-up stops whatever was already started: listen before loading anything heavy.
const starting = new AbortController();
const abortStart = () => starting.abort();
process.once("SIGINT", abortStart);
process.once("SIGTERM", abortStart);

const started = Date.now();
console.log("Starting the licence approval platform…");
const { startStack } = await import("./stack/stack.ts");
let stack: Awaited<ReturnType<typeof startStack>>;
try {
  stack = await startStack({ echo: process.env.STACK_ECHO === "true", log: (line) => console.log(`  ${line}`), signal: starting.signal });
} catch (error) {
  console.error(starting.signal.aborted ? "\nStopped during start-up." : `\nCould not start: ${(error as Error).message}`);
  process.exit(starting.signal.aborted ? 0 : 1);
}
process.off("SIGINT", abortStart);
process.off("SIGTERM", abortStart);

const { config, api } = stack;
const lines = [
  "",
  `Licence approval platform is running (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  `  API          ${api.url}/api/v1`,
  `  API docs     ${api.url}/docs   (OpenAPI: ${api.url}/api/v1/openapi.json)`,
  `  Health       ${api.url}/health`,
  `  Admin client ${stack.admin.clientId}   secret ${stack.admin.clientSecret}`,
  `               (POST ${api.url}/api/v1/auth/token with grant_type=client_credentials&scope=admin)`,
  `  Chain RPC    ${stack.rpcUrl}   (chain ${config.chainId}${stack.chain ? ", embedded anvil" : ""})`,
  `  Indexer      ${stack.indexer?.url ?? "not started here"}`,
  `  Contracts    LicenceToken ${stack.deployment.contracts.LicenceToken}`,
  `               DocumentRegistry ${stack.deployment.contracts.DocumentRegistry}`,
  `               ApprovalRegistry ${stack.deployment.contracts.ApprovalRegistry}`,
  `  Data         ${config.dataDir}   (logs in ${config.dataDir}/logs)`,
  ...(config.devConveniences
    ? ["  Development  DEV_CONVENIENCES=true: passwordless development sign-in and generated secrets are ON (local use only, never real data)"]
    : []),
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
