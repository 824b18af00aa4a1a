/** The auditor's command line: what to read (RPC, deployment file), which licences, and what to do with them. */
import { parseArgs } from "node:util";
import type { AuditTarget } from "./chainAudit.ts";

export const USAGE = `Usage: npm run audit -- --rpc URL --deployment FILE (--token N | --all) [--compare BASE_URL] [--json] [--chunk BLOCKS] [--build FILE]
       [--expect-origin URL]

From chain logs and contract calls alone (no database, no API): the code at each address against the reviewed
build, events read from the contracts' creation (found on chain, not taken from the file), who governs (a Safe's
owners, threshold and modules, or a single key), role holders over time on each contract, the contracts' wiring,
every department wallet change and its delay; then each licence's status, validity, applicant commitment,
documents (every version's SHA-256), every decision with its signer, custody and route (sent by the department's
wallet, or relayed with its checked signature), and for an issued licence its stages complete and the versions its
approvals covered against the latest at issuance. A decision signed by a department's reviewers' passkeys (a
DepartmentPasskeyAccount) has each reviewer's WebAuthn assertion verified by the auditor itself, with the reviewer,
the origin and the RP ID hash it was made for; each passkey department's reviewers and their history are listed.

  --rpc URL            JSON-RPC endpoint of the chain
  --deployment FILE    deployment file (scripts/deploy.ts): { chainId, startBlock, contracts: { LicenceToken,
                       DocumentRegistry, ApprovalRegistry, DecisionVerifier, any other }, roles: { governance, admin,
                       operator, keeper }, walletDelay, deployer? }
  --token N            audit licence token N
  --all                audit every licence minted since the contracts were created
  --compare BASE_URL   also ask the API's public verification endpoints (BASE_URL/api/v1/verify/...) and list every difference
  --json               print the audit (and the differences) as JSON
  --chunk BLOCKS       blocks per eth_getLogs call (default 5000)
  --build FILE         the reviewed build the deployed code must match (default abis/build.json, npm run abis)
  --expect-origin URL  the origin passkey assertions must have been made for (the console's PUBLIC_BASE_URL):
                       an assertion whose clientDataJSON origin is not URL's origin, or whose RP ID hash is not
                       sha256 of URL's host, is a finding (without it they are only reported)

Exit status: 0 the chain is consistent (and the API agrees); 1 findings on chain (among them code that is not the
reviewed build, a startBlock that hides events, governance one key can use alone off the development chain) or
differences with the API; 2 the audit could not be made (usage, unreachable endpoint, wrong deployment file,
unknown token).`;

export class UsageError extends Error {}

/** The options, or "help"; throws UsageError for anything it cannot use. */
export function parseOptions(argv: string[]) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        rpc: { type: "string" },
        deployment: { type: "string" },
        token: { type: "string" },
        all: { type: "boolean", default: false },
        compare: { type: "string" },
        json: { type: "boolean", default: false },
        chunk: { type: "string" },
        build: { type: "string" },
        "expect-origin": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return "help" as const;
  if (!values.rpc) throw new UsageError("--rpc URL is required");
  if (!values.deployment) throw new UsageError("--deployment FILE is required");
  if (values.all === (values.token !== undefined)) throw new UsageError("give exactly one of --token N and --all");
  let target: AuditTarget = "all";
  if (values.token !== undefined) {
    // Token ids are 1 .. 2^40-1 on chain.
    if (!/^\d+$/.test(values.token) || Number(values.token) < 1 || Number(values.token) > 2 ** 40 - 1)
      throw new UsageError(`--token ${values.token} is not a token id (1 .. 2^40-1)`);
    target = { tokenId: Number(values.token) };
  }
  if (values.compare !== undefined && !/^https?:\/\//.test(values.compare))
    throw new UsageError(`--compare ${values.compare} is not an http(s) URL`);
  const expectOrigin = values["expect-origin"];
  if (expectOrigin !== undefined && !/^https?:\/\/[^/]/.test(expectOrigin))
    throw new UsageError(`--expect-origin ${expectOrigin} is not an http(s) URL`);
  const chunkBlocks = values.chunk === undefined ? 5000 : Number(values.chunk);
  if (!Number.isSafeInteger(chunkBlocks) || chunkBlocks < 1)
    throw new UsageError(`--chunk ${values.chunk} is not a positive number of blocks`);
  return {
    rpcUrl: values.rpc,
    deploymentFile: values.deployment,
    target,
    compareUrl: values.compare,
    json: values.json,
    chunkBlocks,
    ...(values.build !== undefined ? { buildFile: values.build } : {}),
    ...(expectOrigin !== undefined ? { expectOrigin } : {}),
  };
}
