/**
 * `npm run bench:lag`: indexer lag on the embedded stack. Starts the bench stack (fresh data directory, free ports),
 * sends 200 writes (registerDepartment from the development governance key, each with the new wallet's key proof,
 * through the real chain gateway), and for each measures
 *   - send → visible: from the call to the gateway until its row is readable in the index views the API reads
 *     (polled every 2 ms by a separate connection);
 *   - the write's own latency (it returns only once the index has its block: read-your-writes).
 * Writes go one at a time, then 8 at a time. Results go to docs/benchmarks.md (section "lag").
 */
import { Contract, Interface, Wallet, encodeBytes32String } from "ethers";
import pg from "pg";
import { ApprovalRegistryAbi, DEPARTMENT_KEY_TYPES } from "../abis/index.ts";
import { governanceWallet } from "../api/src/chain/governanceKey.ts";
import { machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";
import { percentile, runConcurrently, startBenchEnvironment } from "./bench/benchEnvironment.ts";

const WRITES = Number(process.env.BENCH_WRITES ?? 200);
const registry = new Interface(ApprovalRegistryAbi as never);
console.log("Starting a stack…");
const env = await startBenchEnvironment("automine");
const { stack, core, config } = env;
const watcher = new pg.Pool({ connectionString: stack.databaseUrl, max: 2, options: "-c search_path=index" });
// Who decides is governance's: on the embedded chain the stack hands the API the development governance key.
if (!config.governancePrivateKey) throw new Error("the bench stack has no governance key (GOVERNANCE_PRIVATE_KEY)");
const governance = await governanceWallet(core.wallets, config.governancePrivateKey);
const registryAddress = stack.deployment.contracts.ApprovalRegistry;
const registryContract = new Contract(registryAddress, ApprovalRegistryAbi as never, core.gateway.provider);
const [, name, version, chainId, verifyingContract, salt] = await registryContract.eip712Domain();
const domain = { name, version, chainId, verifyingContract, salt };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** registerDepartment through the gateway: [send → row in the index, send → the write returned] in ms. */
async function one(code: string): Promise<[number, number]> {
  const started = performance.now();
  const visible = (async () => {
    while (!(await watcher.query(`SELECT 1 FROM departments WHERE code = $1`, [code])).rowCount) await sleep(2);
    return performance.now() - started;
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
    .send({ kind: "REGISTER_DEPARTMENT", from: governance, to: registryAddress, data })
    .then(() => performance.now() - started);
  return Promise.all([visible, write]);
}

/** Through the API: an applicant creates a request over HTTP; "visible" = GET /requests/{id} answers 200. */
async function viaApi(): Promise<number> {
  const started = performance.now();
  const body = { applicantId: env.applicantId, requestType: "TRADE_LICENSE" };
  const created = await env.request("POST", "/requests", env.applicantToken, body);
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
  while ((await env.request("GET", `/requests/${created.body.requestId}`, env.applicantToken)).status !== 200)
    await sleep(2);
  return performance.now() - started;
}

await env.request("POST", "/departments", env.adminToken, { code: "LAG_DEPARTMENT", name: "Lag" });
await env.request("POST", "/workflows", env.adminToken, {
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
const http: Record<number, number[]> = {};
const gateway: Record<number, [number, number][]> = {};
try {
  for (const concurrency of [1, 8]) {
    http[concurrency] = [];
    await runConcurrently(WRITES, concurrency, async () => void http[concurrency].push(await viaApi()));
    console.log(`  HTTP, concurrency ${concurrency}: ${WRITES} requests created and read back`);
  }
  for (const concurrency of [1, 8]) {
    gateway[concurrency] = [];
    await runConcurrently(WRITES, concurrency, async (i) => {
      gateway[concurrency].push(await one(`LAG_${concurrency}_${i}`));
    });
    console.log(`  concurrency ${concurrency}: ${WRITES} writes done`);
  }
} finally {
  await watcher.end();
  await env.close();
}

const p50p95 = (values: number[]) => `${percentile(values, 50).toFixed(0)} / ${percentile(values, 95).toFixed(0)}`;
const goal = percentile(http[1], 95) <= 300 ? "met ✅" : "not met ❌";
const httpTable = [
  "| Requests created over HTTP (POST /requests: mint through the outbox, chain receipt, index) | send → visible through the API (GET /requests/{id} = 200), p50 / p95 (ms) |",
  "|---|---|",
  `| ${WRITES}, one at a time | ${p50p95(http[1])} |`,
  `| ${WRITES}, 8 at a time | ${p50p95(http[8])} |`,
].join("\n");
const row = (label: string, samples: [number, number][]) =>
  `| ${label} | ${p50p95(samples.map((s) => s[0]))} | ${p50p95(samples.map((s) => s[1]))} |`;
const table = [
  "| Writes | send → visible in the index, p50 / p95 (ms) | write call (returns after read-your-writes), p50 / p95 (ms) |",
  "|---|---|---|",
  row(`${WRITES}, one at a time`, gateway[1]),
  row(`${WRITES}, 8 at a time`, gateway[8]),
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
