/**
 * `npm run bench:lag`: indexer lag on the embedded stack. Starts the bench stack (fresh data directory, free ports)
 * and measures, one at a time, then 8 at a time:
 *   - through the API: POST /requests, then GET /requests/{id} polled every 2 ms until 200 (`npm run bench`'s
 *     write → visible phase, BENCH_WRITES of them);
 *   - below the API: registerDepartment from the development governance key, each with the new wallet's key proof,
 *     through the real chain gateway: send → its row readable in the index views the API reads (polled every 2 ms
 *     by a separate connection), and the write's own latency (it returns once the index has its block).
 * Results go to docs/benchmarks.md (section "lag").
 */
import { Contract, Interface, Wallet, encodeBytes32String } from "ethers";
import pg from "pg";
import { ApprovalRegistryAbi, DEPARTMENT_KEY_TYPES } from "../abis/index.ts";
import { governanceWallet } from "../api/src/chain/governanceKey.ts";
import { p50p95, percentile, runConcurrently, sleep, startBenchEnvironment } from "./bench/benchEnvironment.ts";
import { machineLine, table, writeBenchmarkSection } from "./bench/benchReport.ts";
import { setUpParallelReview, visibility } from "./bench/phases.ts";

const WRITES = Number(process.env.BENCH_WRITES ?? 200);
console.log("Starting a stack…");
const env = await startBenchEnvironment("automine");
const { stack, core, config } = env;
const watcher = new pg.Pool({ connectionString: stack.databaseUrl, max: 2, options: "-c search_path=index" });
// Who decides is governance's: on the embedded chain the stack hands the API the development governance key.
if (!config.governancePrivateKey) throw new Error("the bench stack has no governance key (GOVERNANCE_PRIVATE_KEY)");
const governance = await governanceWallet(core.wallets, config.governancePrivateKey);
const registryAddress = stack.deployment.contracts.ApprovalRegistry;
const registry = new Contract(registryAddress, ApprovalRegistryAbi as never, core.gateway.provider);
const [, name, version, chainId, verifyingContract, salt] = await registry.eip712Domain();
const domain = { name, version, chainId, verifyingContract, salt };

/** registerDepartment through the gateway: [send → row in the index, send → the write returned] in ms. */
async function registerDepartment(code: string): Promise<[number, number]> {
  const started = performance.now();
  const visible = (async () => {
    while (!(await watcher.query(`SELECT 1 FROM departments WHERE code = $1`, [code])).rowCount) await sleep(2);
    return performance.now() - started;
  })();
  const wallet = Wallet.createRandom();
  const code32 = encodeBytes32String(code);
  const keyProof = await wallet.signTypedData(domain, DEPARTMENT_KEY_TYPES, {
    code: code32,
    wallet: wallet.address,
    custody: 0,
  });
  const data = new Interface(ApprovalRegistryAbi as never).encodeFunctionData("registerDepartment", [
    code32,
    wallet.address,
    0,
    keyProof,
  ]);
  const write = core.gateway
    .send({ kind: "REGISTER_DEPARTMENT", from: governance, to: registryAddress, data })
    .then(() => performance.now() - started);
  return Promise.all([visible, write]);
}

const http: Record<number, number[]> = {};
const gateway: Record<number, [number, number][]> = {};
try {
  await setUpParallelReview(env);
  for (const concurrency of [1, 8]) http[concurrency] = (await visibility(env, concurrency, WRITES, 2)).latencies;
  for (const concurrency of [1, 8]) {
    gateway[concurrency] = [];
    await runConcurrently(WRITES, concurrency, async (i) => {
      gateway[concurrency].push(await registerDepartment(`LAG_${concurrency}_${i}`));
    });
    console.log(`  concurrency ${concurrency}: ${WRITES} writes done`);
  }
} finally {
  await watcher.end();
  await env.close();
}

const goal = percentile(http[1], 95) <= 300 ? "met ✅" : "not met ❌";
const label = (concurrency: number) => `${WRITES}, ${concurrency === 1 ? "one" : concurrency} at a time`;
const httpTable = table(
  [
    "Requests created over HTTP (POST /requests: mint through the outbox, chain receipt, index)",
    "send → visible through the API (GET /requests/{id} = 200), p50 / p95 (ms)",
  ],
  [1, 8].map((c) => [label(c), p50p95(http[c])]),
).join("\n");
const gatewayTable = table(
  [
    "Writes",
    "send → visible in the index, p50 / p95 (ms)",
    "write call (returns after read-your-writes), p50 / p95 (ms)",
  ],
  [1, 8].map((c) => [label(c), p50p95(gateway[c].map((s) => s[0])), p50p95(gateway[c].map((s) => s[1]))]),
).join("\n");
console.log(
  `\n${httpTable}\n\n${gatewayTable}\nGoal p95 ≤ 300 ms (one at a time, send → visible through the API): ${goal}`,
);

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

${gatewayTable}`,
);
process.exit(0);
