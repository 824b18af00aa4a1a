/**
 * The measured phases of `npm run bench`. Each is one `measurePhase`: the CPU meter runs while the load does, and the
 * phase carries its operations, so every table divides the same way (CPU-ms per operation).
 *   - idle: the stack with no client (Ponder's polling, the chain's blocks, timers);
 *   - raw mint: pre-signed `LicenceToken.mint` from the operator straight to the node, one at a time (each accepted
 *     before the next), timed until the last is mined; optionally again as one JSON-RPC batch (not metered);
 *   - POST /requests from N autocannon clients (outbox → broadcast → receipt → index → 201);
 *   - write → visible (not metered): each client creates a request, then reads it back until the API shows it;
 *   - approvals: departments deciding from their own custodial wallets (independent nonce lanes), APPROVALS_IN_FLIGHT each;
 *   - reads: 32 autocannon clients per endpoint with the seeded requests, and the same clients against a bare Koa
 *     server in its own process answering a constant JSON body of a request read's size (the HTTP round trip).
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { keccak256 } from "ethers";
import { zeroHash } from "viem";
import { stringToBytes32 } from "../../abis/index.ts";
import { applicantAddress } from "../../api/src/chain/applicantKeys.ts";
import { hexBytes, licenceTokenCall } from "../../api/src/chain/contractCalls.ts";
import { rpc } from "../stack/localChain.ts";
import {
  load,
  percentile,
  reserveTokenIds,
  resyncOperatorNonce,
  rpcBatch,
  runConcurrently,
  say,
  sleep,
  type BenchEnvironment,
} from "./benchEnvironment.ts";
import { measureCpu, type CpuUsage, type StackCpuMeter } from "./processCpu.ts";
import type { Seeded } from "./seedRequests.ts";

if (process.argv[2] === "serve-bare-koa") {
  const { default: Koa } = await import("koa");
  const body = {
    requestId: "00000000-0000-4000-8000-000000000000",
    events: Array.from({ length: 8 }, (_, i) => ({ i, description: "x".repeat(120) })),
  };
  const server = new Koa().use((ctx) => void (ctx.body = body)).listen(0, "127.0.0.1");
  server.on("listening", () => process.send!(server.address()));
  process.on("disconnect", () => process.exit(0));
}

export interface Phase {
  /** Column title, e.g. "automine: POST /requests". */
  title: string;
  /** What one operation is ("write", "read", "s" for idle seconds). */
  unit: string;
  operations: number;
  cpu: CpuUsage;
  /** The same stack's CPU-ms per second at rest: the part of a figure that is not caused by the operations. */
  idleMsPerSecond?: number;
}

/** The stack's CPU while `work` runs, as a phase of `work`'s operations. */
export async function measurePhase<T extends { operations: number }>(
  meter: StackCpuMeter,
  title: string,
  unit: string,
  work: () => Promise<T>,
): Promise<Phase & T> {
  const { result, cpu } = await measureCpu(meter, work);
  return { title, unit, cpu, ...result };
}

export const perOperation = (p: Phase) => p.cpu.stackMs / Math.max(1, p.operations);

export async function idle(env: BenchEnvironment, seconds: number): Promise<Phase> {
  // Let what the set-up started (jobs deriving events from its transactions, the index catching up) finish.
  await sleep(2_000);
  const phase = await measurePhase(env.meter, `${env.mode}: idle`, "s", async () => {
    await sleep(seconds * 1000);
    return { operations: seconds };
  });
  say(`idle (${env.mode}): ${perOperation(phase).toFixed(0)} CPU-ms per second`);
  return phase;
}

/** Mints of TRADE_LICENSE tokens to the bench applicant's custodial address, signed here with the operator key. */
async function presignedMints(env: BenchEnvironment, count: number): Promise<string[]> {
  const { core, stack, config } = env;
  const firstTokenId = await reserveTokenIds(env, count);
  const signer = await core.wallets.signer(stack.operatorAddress);
  const owner = hexBytes(applicantAddress(env.custody, env.applicantId));
  const nonce = await core.provider.getTransactionCount(stack.operatorAddress, "pending");
  const block = await core.provider.getBlock("latest");
  // Free gas (the Besu way): gas price 0, as the API sends with CHAIN_GAS_MODE=free; the operator holds no ether.
  const fees =
    config.chainGasMode === "free"
      ? { type: 0, gasPrice: 0n }
      : { type: 2, maxFeePerGas: block!.baseFeePerGas! * 4n + 1_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
  const trade = stringToBytes32("TRADE_LICENSE");
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      signer.signTransaction({
        ...fees,
        chainId: config.chainId,
        nonce: nonce + i,
        to: stack.deployment.contracts.LicenceToken,
        gasLimit: 200_000n,
        data: licenceTokenCall("mint", [owner, firstTokenId + BigInt(i), trade, zeroHash]),
      }),
    ),
  );
}

/** Sends `raw` one at a time or as one batch; transactions per second until the last is mined. */
async function sendMints(env: BenchEnvironment, raw: string[], asBatch: boolean): Promise<number> {
  const url = env.stack.rpcUrl;
  const started = performance.now();
  if (asBatch) {
    const answers = await rpcBatch(
      url,
      raw.map((tx) => ({ method: "eth_sendRawTransaction", params: [tx] })),
    );
    if (answers.some((a) => a.error)) throw new Error("batch send refused");
  } else for (const tx of raw) await rpc(url, "eth_sendRawTransaction", [tx]);
  const last = keccak256(raw.at(-1)!);
  while (!(await env.core.provider.getTransactionReceipt(last))) await sleep(5);
  return raw.length / ((performance.now() - started) / 1000);
}

export async function rawMints(env: BenchEnvironment, count: number, options: { batch?: boolean } = {}) {
  const raw = await presignedMints(env, count);
  const phase = await measurePhase(env.meter, `${env.mode}: raw mint`, "tx", async () => ({
    operations: count,
    sequentialTps: await sendMints(env, raw, false),
  }));
  // As one JSON-RPC batch: automine only (with interval blocks it measures the block size, not the node).
  const batchTps = options.batch ? await sendMints(env, await presignedMints(env, count), true) : undefined;
  await resyncOperatorNonce(env);
  // The next phase must not start with the index a thousand raw blocks behind (its writes would time out waiting).
  const started = performance.now();
  const head = parseInt(await rpc(env.stack.rpcUrl, "eth_blockNumber", []), 16);
  if (!(await env.core.index.waitForBlock(head, 300_000)))
    throw new Error(`the index did not reach block ${head} in 5 minutes`);
  say(
    `raw chain (${env.mode}): ${phase.sequentialTps.toFixed(0)} tx/s one at a time${batchTps ? `, ${batchTps.toFixed(0)} tx/s as one batch` : ""} (${count} mints; the index caught up ${((performance.now() - started) / 1000).toFixed(1)} s later)`,
  );
  return { ...phase, batchTps };
}

/** Failed writes are counted, not fatal, unless they are more than a tenth: one slow receipt must not void a run. */
function checkFailures(total: number, failures: string[]): void {
  if (failures.length > Math.max(1, total / 10))
    throw new Error(`more than a tenth of the writes failed; first: ${failures[0]}`);
}

/** POST /requests from `concurrency` autocannon clients, `writes` in all. */
export async function writes(env: BenchEnvironment, concurrency: number, writes: number) {
  const timeoutsBefore = await env.readYourWritesTimeouts();
  const phase = await measurePhase(env.meter, `${env.mode}: POST /requests`, "write", async () => ({
    // CPU per write divides by every write sent (failures cost too).
    operations: writes,
    ...(await load(201, {
      url: `${env.api}/requests`,
      method: "POST",
      headers: { authorization: `Bearer ${env.applicantToken}`, "content-type": "application/json" },
      body: JSON.stringify({ applicantId: env.applicantId, requestType: "TRADE_LICENSE" }),
      connections: concurrency,
      amount: writes,
    })),
  }));
  const { result, latencies } = phase;
  const failures = [
    ...phase.failures.map((status) => `POST /requests answered ${status}`),
    ...Array.from({ length: result.errors }, () => "POST /requests: no answer (connection error or timeout)"),
  ];
  checkFailures(writes, failures);
  const readYourWritesTimeouts = (await env.readYourWritesTimeouts()) - timeoutsBefore;
  const summary = {
    ...phase,
    concurrency,
    // Throughput counts the writes that succeeded.
    perSecond: latencies.length / result.duration,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    readYourWritesTimeouts,
    failed: failures.length,
    firstFailure: failures[0],
  };
  say(
    `HTTP writes (${env.mode}), ${concurrency} client(s): ${summary.perSecond.toFixed(1)} requests/s (latency p50 ${summary.p50.toFixed(0)} / p95 ${summary.p95.toFixed(0)} ms), ${perOperation(phase).toFixed(1)} CPU-ms per write, ${readYourWritesTimeouts} read-your-writes timeouts`,
  );
  return summary;
}
export type WriteResult = Awaited<ReturnType<typeof writes>>;

/** Send → visible through the API: POST /requests, then GET /requests/{id} (every `pollMs`) until it answers 200. */
export async function visibility(env: BenchEnvironment, concurrency: number, writes: number, pollMs = 5) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let notVisibleAtReturn = 0;
  const timeoutsBefore = await env.readYourWritesTimeouts();
  await runConcurrently(writes, concurrency, async () => {
    const started = performance.now();
    const body = { applicantId: env.applicantId, requestType: "TRADE_LICENSE" };
    const created = await env.request("POST", "/requests", env.applicantToken, body);
    if (created.status !== 201) {
      failures.push(`POST /requests answered ${created.status}: ${JSON.stringify(created.body)}`);
      return checkFailures(writes, failures);
    }
    const id = created.body.requestId;
    for (let attempt = 0; ; attempt++) {
      const read = await env.request("GET", `/requests/${id}`, env.applicantToken);
      if (read.status === 200) break;
      if (read.status !== 404)
        throw new Error(`GET /requests/${id} answered ${read.status}: ${JSON.stringify(read.body)}`);
      if (attempt === 0) notVisibleAtReturn++;
      if (performance.now() - started > 60_000) throw new Error(`request ${id} not visible after 60 s`);
      await sleep(pollMs);
    }
    latencies.push(performance.now() - started);
  });
  const result = {
    concurrency,
    latencies,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    /** Writes whose first read right after the 201 did not find them (read-your-writes broken for that client). */
    notVisibleAtReturn,
    readYourWritesTimeouts: (await env.readYourWritesTimeouts()) - timeoutsBefore,
    failed: failures.length,
  };
  say(
    `write → visible through the API (${env.mode}), ${concurrency} client(s): p50 ${result.p50.toFixed(0)} / p95 ${result.p95.toFixed(0)} ms; not visible at return: ${notVisibleAtReturn}`,
  );
  return result;
}
export type VisibilityResult = Awaited<ReturnType<typeof visibility>>;

export interface DepartmentKey {
  code: string;
  apiKey: string;
}

/**
 * Eight departments; BUILDING_PERMIT with one PARALLEL stage needing all of them, the other types one stage of the
 * first department.
 */
export async function setUpParallelReview(env: BenchEnvironment): Promise<DepartmentKey[]> {
  const post = async (route: string, body: unknown) => {
    const answer = await env.request("POST", route, env.adminToken, body);
    if (answer.status !== 201) throw new Error(`${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const keys: DepartmentKey[] = [];
  for (const letter of "ABCDEFGH") {
    const code = `BENCH_DEPT_${letter}`;
    keys.push({ code, apiKey: (await post("/departments", { code, name: `Bench department ${letter}` })).apiKey });
  }
  const approval = (k: DepartmentKey) => ({ departmentCode: k.code, requiredDocuments: [], isMandatory: true });
  for (const workflowType of ["BUILDING_PERMIT", "TRADE_LICENSE", "RESORT_LICENSE"]) {
    const parallel = workflowType === "BUILDING_PERMIT";
    const stage = {
      stageId: parallel ? "all" : "one",
      stageName: parallel ? "Joint review" : "Review",
      stageOrder: 1,
      executionType: parallel ? "PARALLEL" : "SEQUENTIAL",
      completionCriteria: "ALL",
      requiredApprovals: (parallel ? keys : keys.slice(0, 1)).map(approval),
    };
    await post("/workflows", { workflowType, name: `Bench ${workflowType}`, stages: [stage] });
  }
  return keys;
}

/**
 * Decisions one department has in flight. Every decision waits for its block (1 s), so this bounds one department's
 * rate: 4 allowed at most 4 a second whatever the stack could do.
 */
export const APPROVALS_IN_FLIGHT = 32;

/** For each number of departments in `rounds`, each approves `perDepartment` fresh submitted requests. */
export async function approvals(
  env: BenchEnvironment,
  keys: DepartmentKey[],
  perDepartment: number,
  rounds: number[],
  inFlight = APPROVALS_IN_FLIGHT,
) {
  const results = [];
  for (const departments of rounds) {
    // Fresh submitted requests for this round (not measured), from 32 clients.
    const requests: string[] = [];
    await runConcurrently(perDepartment, 32, async () => {
      const body = { applicantId: env.applicantId, requestType: "BUILDING_PERMIT" };
      const created = await env.request("POST", "/requests", env.applicantToken, body);
      const submitted = await env.request("POST", `/requests/${created.body.requestId}/submit`, env.applicantToken, {});
      if (submitted.status !== 200) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
      requests.push(created.body.requestId);
    });
    const title = `${env.mode}: approvals, ${departments} departments`;
    const phase = await measurePhase(env.meter, title, "approval", async () => {
      const started = performance.now();
      // Each department works through its own list, `inFlight` decisions at a time (one reviewer's queue).
      await Promise.all(
        keys.slice(0, departments).map((key) =>
          runConcurrently(requests.length, inFlight, async (i) => {
            const headers = { "x-api-key": key.apiKey, "x-department-code": key.code };
            const body = { remarks: "ok", reviewedDocuments: [] };
            const answer = await env.request("POST", `/requests/${requests[i]}/approve`, undefined, body, headers);
            if (answer.status !== 200) throw new Error(`approve: ${answer.status} ${JSON.stringify(answer.body)}`);
          }),
        ),
      );
      const operations = departments * requests.length;
      return { departments, operations, perSecond: operations / ((performance.now() - started) / 1000) };
    });
    results.push(phase);
    say(
      `approvals (${env.mode}), ${departments} department(s) in parallel: ${phase.perSecond.toFixed(1)} approvals/s (${phase.operations}), ${perOperation(phase).toFixed(1)} CPU-ms per approval`,
    );
  }
  return results;
}

/** Transactions and gas in the blocks mined during a phase: whether the clients filled the blocks. */
export async function blockFill(env: BenchEnvironment, from: number, to: number) {
  let [transactions, gasUsed, gasLimit] = [0, 0, 0];
  for (let n = from + 1; n <= to; n++) {
    const block = await rpc(env.stack.rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, false]);
    transactions += block.transactions.length;
    gasUsed += parseInt(block.gasUsed, 16);
    gasLimit += parseInt(block.gasLimit, 16);
  }
  const blocks = Math.max(1, to - from);
  return { blocks, txPerBlock: transactions / blocks, gasFill: gasLimit > 0 ? gasUsed / gasLimit : 0 };
}

/** An endpoint under read load, for `seconds` from `connections` clients after a warm-up; its p50, p95, p99. */
async function readPhase(
  meter: StackCpuMeter,
  endpoint: string,
  base: string,
  route: () => string,
  options: { seconds: number; connections: number; token?: string; goalRatio?: number },
) {
  const path = () => `${new URL(base).pathname.replace(/\/$/, "")}${route()}`;
  const load200 = (more: object) =>
    load(200, {
      url: base,
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      requests: [{ setupRequest: (req: any) => ({ ...req, path: path() }) }],
      ...more,
    });
  await load200({ connections: 1, amount: 50 }); // warm-up, not counted (connections, plan caches)
  const phase = await measurePhase(meter, `reads: ${endpoint}`, "read", async () => {
    const { latencies, failures } = await load200({ connections: options.connections, duration: options.seconds });
    if (failures.length > 0) throw new Error(`${endpoint}: answered ${failures[0]}`);
    const [p50, p95, p99] = [50, 95, 99].map((p) => percentile(latencies, p));
    return { operations: latencies.length, p50, p95, p99 };
  });
  say(
    `${endpoint}: p50 ${phase.p50.toFixed(1)} / p95 ${phase.p95.toFixed(1)} / p99 ${phase.p99.toFixed(1)} ms (${phase.operations} requests, ${perOperation(phase).toFixed(2)} CPU-ms each)`,
  );
  return { ...phase, endpoint, goalRatio: options.goalRatio };
}

export async function reads(env: BenchEnvironment, seeded: Seeded, seconds: number, connections: number) {
  const pick = () => Math.floor(Math.random() * seeded.count);
  const types = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"];
  const [admin, anyone] = [
    { seconds, connections, token: env.adminToken },
    { seconds, connections },
  ];
  const detail = await readPhase(
    env.meter,
    "GET /requests/{id}",
    env.api,
    () => `/requests/${seeded.requestIds[pick()]}`,
    {
      ...admin,
      goalRatio: 2,
    },
  );
  const list = await readPhase(
    env.meter,
    "GET /requests?requestType&status",
    env.api,
    () => `/requests?requestType=${types[pick() % 3]}&status=DRAFT&page=${1 + (pick() % 20)}&limit=20`,
    { ...admin, goalRatio: 3 },
  );
  const verify = await readPhase(
    env.meter,
    "GET /verify/{tokenId}",
    env.api,
    () => `/verify/${seeded.firstTokenId + BigInt(pick())}`,
    {
      ...anyone,
      goalRatio: 2,
    },
  );
  const bare = fork(fileURLToPath(import.meta.url), ["serve-bare-koa"], { stdio: "ignore" });
  try {
    const [{ port }] = (await once(bare, "message")) as [{ port: number }];
    const bareHttp = await readPhase(
      { named: () => [{ name: "bare Koa server", pid: bare.pid! }] },
      "Reference: bare Koa, constant JSON (the HTTP round trip here)",
      `http://127.0.0.1:${port}`,
      () => "/",
      anyone,
    );
    return { detail, list, verify, bareHttp };
  } finally {
    bare.kill();
  }
}
