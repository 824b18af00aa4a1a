/**
 * Everything comes from the environment:
 *   DEPLOYMENT_FILE     JSON written by scripts/deploy.ts: { chainId, startBlock, contracts: { LicenceToken, ... } }
 *   CHAIN_RPC_URL       JSON-RPC endpoint of that chain
 *   CHAIN_WS_URL        its WebSocket endpoint, optional: new blocks come by eth_subscribe("newHeads") instead of a
 *                       poll every 100 ms (Ponder's minimum: a full block fetched ten times a second, busy or idle)
 *   DATABASE_URL        Postgres connection string; unset: Ponder's default (PGlite in .ponder/)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { createConfig } from "ponder";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../abis/index.ts";

/** New-block polling interval without CHAIN_WS_URL: Ponder's minimum. */
const POLLING_MS = 100;
/**
 * Ponder rate-limits each RPC URL adaptively, starting at 20 requests/s and raising it only slowly. Polling every
 * 100 ms takes half of that, and each new block needs ~3 more requests, so a burst of one-transaction blocks
 * (anvil automine) fell seconds behind. Listing the same URL RPC_LANES times gives Ponder that many independent
 * 20 req/s budgets (idle load is unchanged: one poll per interval). Measured on anvil, 50 mints at ~14 tx/s:
 * receipt-to-row lag p50 4.8 s / max 7.9 s with one lane, p50 0.10 s / max 0.23 s with 8.
 */
const RPC_LANES = 8;

function requireEnv(name: string, meaning: string): string {
  const value = process.env[name]?.trim();
  if (!value) throw new Error(`Indexer configuration: environment variable ${name} is not set (${meaning}).`);
  return value;
}

interface Deployment {
  chainId: number;
  startBlock: number;
  contracts: { LicenceToken: `0x${string}`; DocumentRegistry: `0x${string}`; ApprovalRegistry: `0x${string}` };
}

function readDeployment(): Deployment {
  const file = path.resolve(requireEnv("DEPLOYMENT_FILE", "path of the deployment JSON written by scripts/deploy.ts"));
  let raw: any;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`Indexer configuration: cannot read DEPLOYMENT_FILE ${file}: ${(error as Error).message}`);
  }
  const fail = (what: string) => {
    throw new Error(`Indexer configuration: DEPLOYMENT_FILE ${file}: ${what}`);
  };
  if (!Number.isSafeInteger(raw?.chainId) || raw.chainId <= 0) fail("chainId must be a positive integer");
  if (!Number.isSafeInteger(raw?.startBlock) || raw.startBlock < 0) fail("startBlock must be a block number");
  for (const name of ["LicenceToken", "DocumentRegistry", "ApprovalRegistry"]) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw?.contracts?.[name] ?? "")) fail(`contracts.${name} must be an address`);
  }
  return raw as Deployment;
}

const deployment = readDeployment();
const rpc = requireEnv("CHAIN_RPC_URL", "JSON-RPC endpoint of the chain in DEPLOYMENT_FILE");
const ws = process.env.CHAIN_WS_URL?.trim() || undefined;
const databaseUrl = process.env.DATABASE_URL?.trim();

// One entry per contract; `includeTransactionReceipts` gives handlers the receipt (gas used).
const contract = <const abi>(abi: abi, address: `0x${string}`) => ({
  abi,
  chain: "licence" as const,
  address,
  startBlock: deployment.startBlock,
  includeTransactionReceipts: true as const,
});

export default createConfig({
  ...(databaseUrl ? { database: { kind: "postgres" as const, connectionString: databaseUrl } } : {}),
  chains: {
    licence: {
      id: deployment.chainId,
      rpc: Array.from({ length: RPC_LANES }, () => rpc),
      ...(ws ? { ws } : {}),
      pollingInterval: POLLING_MS,
      // A local dev chain (anvil / hardhat) is reset often: never reuse cached RPC responses for it.
      disableCache: deployment.chainId === 31337,
    },
  },
  contracts: {
    LicenceToken: contract(LicenceTokenAbi, deployment.contracts.LicenceToken),
    DocumentRegistry: contract(DocumentRegistryAbi, deployment.contracts.DocumentRegistry),
    ApprovalRegistry: contract(ApprovalRegistryAbi, deployment.contracts.ApprovalRegistry),
  },
});
