/**
 * `npm run bench:lag`: indexer lag on the embedded stack. Starts its own stack (fresh data directory, free ports),
 * sends 200 writes (registerDepartment from the development governance key, each with the new wallet's key proof,
 * through the real chain gateway), and for each measures
 *   - send → visible: from the call to the gateway until its row is readable in the index views the API reads
 *     (polled every 2 ms by a separate connection);
 *   - the write's own latency (it returns only once the index has its block: read-your-writes).
 * Writes go one at a time, then 8 at a time. Results go to docs/benchmarks.md (section "lag").
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Contract, Interface, Wallet, encodeBytes32String } from "ethers";
import pg from "pg";
import { ApprovalRegistryAbi, DEPARTMENT_KEY_TYPES } from "../abis/index.ts";
import { loadConfig } from "../api/src/config.ts";
import { createLogger } from "../api/src/observability/logger.ts";
import { createCoreServices } from "../api/src/services.ts";
import { governanceWallet } from "../api/src/chain/governanceKey.ts";
import { machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";
import { benchStackEnv } from "./bench/benchStackEnv.ts";
import { startStack } from "./stack/stack.ts";
import { adminSignIn } from "./bench/adminSignIn.ts";
import { developmentSignIn } from "./bench/developmentSignIn.ts";

const WRITES = Number(process.env.BENCH_WRITES ?? 200);
const registry = new Interface(ApprovalRegistryAbi as never);
const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-lag-"));
const env = await benchStackEnv(dataDir);
console.log(`Starting a stack in ${dataDir}…`);
const stack = await startStack({ env, log: () => {} });
const config = loadConfig(stack.env);
const core = await createCoreServices(config, createLogger("silent"));
const watcher = new pg.Pool({ connectionString: stack.databaseUrl, max: 2, options: "-c search_path=index" });
// Who decides is governance's: on the embedded chain the stack hands the API the development governance key.
if (!config.governancePrivateKey) throw new Error("the bench stack has no governance key (GOVERNANCE_PRIVATE_KEY)");
const governance = await governanceWallet(core.wallets, config.governancePrivateKey);
const registryContract = new Contract(
  stack.deployment.contracts.ApprovalRegistry,
  ApprovalRegistryAbi as never,
  core.gateway.provider,
);
const [, domainName, domainVersion, chainId, verifyingContract, salt] = await registryContract.eip712Domain();
const domain = { name: domainName, version: domainVersion, chainId, verifyingContract, salt };

interface Sample {
  sendToVisible: number;
  write: number;
}

async function one(code: string): Promise<Sample> {
  const started = performance.now();
  const visible = (async () => {
    for (;;) {
      const { rowCount } = await watcher.query(`SELECT 1 FROM departments WHERE code = $1`, [code]);
      if (rowCount) return performance.now();
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const wallet = Wallet.createRandom();
  const keyProof = await wallet.signTypedData(domain, DEPARTMENT_KEY_TYPES, {
    code: encodeBytes32String(code),
    wallet: wallet.address,
    custody: 0,
  });
  const data = registry.encodeFunctionData("registerDepartment", [
    encodeBytes32String(code),
    wallet.address,
    0,
    keyProof,
  ]);
  const write = core.gateway
    .send({
      kind: "REGISTER_DEPARTMENT",
      from: governance,
      to: stack.deployment.contracts.ApprovalRegistry,
      data,
    })
    .then(() => performance.now());
  const [seen, finished] = await Promise.all([visible, write]);
  return { sendToVisible: seen - started, write: finished - started };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const summarize = (samples: Sample[], key: keyof Sample) => ({
  p50: percentile(
    samples.map((s) => s[key]),
    50,
  ),
  p95: percentile(
    samples.map((s) => s[key]),
    95,
  ),
});

// Through the API: an applicant creates requests over HTTP; "visible" = GET /requests/{id} answers 200.
const api = stack.api.url;
const post = async (route: string, token: string, body: unknown) => {
  const response = await fetch(`${api}/api/v1${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const adminToken = await adminSignIn(`${api}/api/v1`, stack.admin);
await post("/departments", adminToken, { code: "LAG_DEPARTMENT", name: "Lag" });
await post("/workflows", adminToken, {
  workflowType: "TRADE_LICENSE",
  name: "Lag",
  stages: [
    {
      stageId: "s",
      stageName: "Review",
      stageOrder: 1,
      executionType: "SEQUENTIAL",
      requiredApprovals: [{ departmentCode: "LAG_DEPARTMENT", requiredDocuments: ["PLAN"], isMandatory: true }],
    },
  ],
});
const applicantToken = await developmentSignIn(`${api}/api/v1`, "lag");

async function viaApi(): Promise<number> {
  const started = performance.now();
  const created = await post("/requests", applicantToken, { applicantId: "lag", requestType: "TRADE_LICENSE" });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
  for (;;) {
    const read = await fetch(`${api}/api/v1/requests/${created.body.requestId}`, {
      headers: { authorization: `Bearer ${applicantToken}` },
    });
    if (read.status === 200) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 2));
  }
}
const httpResults: Record<number, number[]> = {};
for (const concurrency of [1, 8]) {
  const samples: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < WRITES) {
      next++;
      samples.push(await viaApi());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  httpResults[concurrency] = samples;
  console.log(`  HTTP, concurrency ${concurrency}: ${WRITES} requests created and read back`);
}

const results: Record<string, Sample[]> = {};
for (const concurrency of [1, 8]) {
  const samples: Sample[] = [];
  let next = 0;
  const worker = async () => {
    while (next < WRITES) {
      const i = next++;
      samples.push(await one(`LAG_${concurrency}_${i}`));
      if (samples.length % 25 === 0)
        process.stdout.write(`  concurrency ${concurrency}: ${samples.length}/${WRITES}\r`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  results[concurrency] = samples;
  console.log(`  concurrency ${concurrency}: ${WRITES} writes done            `);
}

await watcher.end();
await core.close();
await stack.stop();
await rm(dataDir, { recursive: true, force: true });

const row = (label: string, samples: Sample[]) => {
  const a = summarize(samples, "sendToVisible"),
    c = summarize(samples, "write");
  return `| ${label} | ${a.p50.toFixed(0)} / ${a.p95.toFixed(0)} | ${c.p50.toFixed(0)} / ${c.p95.toFixed(0)} |`;
};
const httpRow = (label: string, values: number[]) =>
  `| ${label} | ${percentile(values, 50).toFixed(0)} / ${percentile(values, 95).toFixed(0)} |`;
const goal = percentile(httpResults[1], 95) <= 300 ? "met ✅" : "not met ❌";
const httpTable = [
  "| Requests created over HTTP (POST /requests: mint through the outbox, chain receipt, index) | send → visible through the API (GET /requests/{id} = 200), p50 / p95 (ms) |",
  "|---|---|",
  httpRow(`${WRITES}, one at a time`, httpResults[1]),
  httpRow(`${WRITES}, 8 at a time`, httpResults[8]),
].join("\n");
const table = [
  "| Writes | send → visible in the index, p50 / p95 (ms) | write call (returns after read-your-writes), p50 / p95 (ms) |",
  "|---|---|---|",
  row(`${WRITES}, one at a time`, results[1]),
  row(`${WRITES}, 8 at a time`, results[8]),
].join("\n");
console.log(`\n${httpTable}\n\n${table}\nGoal p95 ≤ 300 ms (one at a time, send → visible through the API): ${goal}`);

await writeBenchmarkSection(
  "lag",
  `## Indexer lag (\`npm run bench:lag\`)

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}. The embedded stack (anvil automine, Ponder
0.17 polling every 100 ms, embedded Postgres 18). Goal: p95 ≤ 300 ms from send to visible through the API:
**${goal}**.

Through the API: an applicant creates licence requests (\`POST /requests\`: simulate, record in the outbox, sign,
broadcast, receipt, wait for the index to reach the block), then reads each back (\`GET /requests/{id}\`, polled
every 2 ms until 200).

${httpTable}

Below the API: \`registerDepartment\` transactions from the governance key through the chain gateway; "visible" means
the row is readable in the index views the API reads, polled every 2 ms by another connection.

${table}`,
);
process.exit(0);
