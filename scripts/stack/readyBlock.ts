/**
 * What `npm start` prints once the platform is up. The admin secret only when the stack generated it: one the operator
 * supplied (ADMIN_CLIENT_SECRET) is never echoed to a console or log, nor an RPC URL's credentials or path.
 */
import { redactedUrl } from "../../api/src/config.ts";
import type { Stack } from "./stack.ts";

export type ReadyStack = Pick<Stack, "api" | "apis" | "rpcUrl" | "chain" | "indexer" | "deployment" | "admin"> & {
  config: Pick<Stack["config"], "chainId" | "dataDir" | "devConveniences" | "workerProcesses">;
};

export function readyBlock(stack: ReadyStack, startedSeconds: number): string[] {
  const { config, api } = stack;
  const workers = config.workerProcesses;
  return [
    "",
    `Licence approval platform is running (${startedSeconds.toFixed(1)} s)`,
    `  API          ${api.url}/api/v1   (${stack.apis.length} API process${stack.apis.length === 1 ? "" : "es"}${workers ? `, ${workers} worker${workers === 1 ? "" : "s"}` : ""})`,
    `  Verify       ${api.url}/verify   (anyone: a licence by number or QR code, a document by its hash)`,
    `  API docs     ${api.url}/docs   (OpenAPI: ${api.url}/api/v1/openapi.json)`,
    `  Health       ${api.url}/health`,
    `  Chain RPC    ${redactedUrl(stack.rpcUrl)}   (chain ${config.chainId}${stack.chain ? ", embedded anvil" : ""})`,
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
    ...(stack.admin.secretGenerated
      ? [
          "  Admin client (client credentials, scope admin; paste these lines into a shell for the README walkthrough):",
          `ID=${stack.admin.clientId}`,
          `SECRET=${stack.admin.clientSecret}`,
        ]
      : [
          "  Admin client (client credentials, scope admin): the ADMIN_CLIENT_SECRET you configured (not shown)",
          `ID=${stack.admin.clientId}`,
        ]),
    `API=${api.url}/api/v1`,
    "Press Ctrl-C to stop.",
  ];
}
