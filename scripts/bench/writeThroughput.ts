/**
 * Write throughput. Raw: pre-signed `LicenceToken.mint` transactions from the operator sent straight to the node,
 * one at a time (each accepted before the next is sent), timed until the last is mined. End to end: POST /requests
 * over HTTP (outbox record → broadcast → receipt → index → response) from N concurrent clients, with the CPU the
 * stack used for it. Visibility: each client creates a request, then reads it back until the API shows it.
 */
import { keccak256 } from "ethers";
import { zeroHash } from "viem";
import { stringToBytes32 } from "../../abis/index.ts";
import { hexBytes, licenceTokenCall } from "../../api/src/chain/contractCalls.ts";
import { applicantAddress } from "../../api/src/chain/applicantKeys.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { rpc } from "../stack/localChain.ts";
import {
  load,
  percentile,
  reserveTokenIds,
  rpcBatch,
  runConcurrently,
  say,
  type BenchEnvironment,
} from "./benchEnvironment.ts";
import { measureCpu, type CpuUsage } from "./processCpu.ts";

export interface RawThroughput {
  count: number;
  sequentialTps: number;
  /** As one JSON-RPC batch (automine only: with interval blocks it measures the block size, not the node). */
  batchTps?: number;
  cpu: CpuUsage;
}

/** Mints of TRADE_LICENSE tokens to the bench applicant's custodial address, signed here with the operator key. */
async function presignedMints(env: BenchEnvironment, count: number, firstTokenId: bigint): Promise<string[]> {
  const { core, stack, config } = env;
  const operator = stack.operatorAddress;
  const signer = await core.wallets.signer(operator);
  const owner = applicantAddress(
    config.custodySecret ?? (await developmentSecret(config.dataDir, "custody.key")),
    env.applicantId,
  );
  const nonce = await core.provider.getTransactionCount(operator, "pending");
  const block = await core.provider.getBlock("latest");
  // Free gas (the Besu way): gas price 0, as the API sends with CHAIN_GAS_MODE=free; the operator holds no ether.
  const fees =
    config.chainGasMode === "free"
      ? { type: 0, gasPrice: 0n }
      : { type: 2, maxFeePerGas: block!.baseFeePerGas! * 4n + 1_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
  const raw: string[] = [];
  for (let i = 0; i < count; i++) {
    raw.push(
      await signer.signTransaction({
        ...fees,
        chainId: config.chainId,
        nonce: nonce + i,
        to: stack.deployment.contracts.LicenceToken,
        gasLimit: 200_000n,
        data: licenceTokenCall("mint", [
          hexBytes(owner),
          firstTokenId + BigInt(i),
          stringToBytes32("TRADE_LICENSE"),
          zeroHash,
        ]),
      }),
    );
  }
  return raw;
}

/** Moves the operator's outbox nonce past what was sent behind the API's back. */
async function resyncOperatorNonce(env: BenchEnvironment): Promise<void> {
  const pending = await env.core.provider.getTransactionCount(env.stack.operatorAddress, "pending");
  await env.core.pool.query(`UPDATE wallets SET next_nonce = GREATEST(next_nonce, $2) WHERE address = $1`, [
    env.stack.operatorAddress.toLowerCase(),
    pending,
  ]);
}

async function waitMined(env: BenchEnvironment, lastRaw: string): Promise<void> {
  const hash = keccak256(lastRaw);
  while (!(await env.core.provider.getTransactionReceipt(hash))) await new Promise((r) => setTimeout(r, 5));
}

export async function measureRawThroughput(
  env: BenchEnvironment,
  count: number,
  options: { batch?: boolean } = {},
): Promise<RawThroughput> {
  const url = env.stack.rpcUrl;
  const reserve = () => reserveTokenIds(env, count);
  // One at a time.
  let raw = await presignedMints(env, count, await reserve());
  const { result: sequentialTps, cpu } = await measureCpu(env.meter, async () => {
    const started = performance.now();
    for (const tx of raw) await rpc(url, "eth_sendRawTransaction", [tx]);
    await waitMined(env, raw.at(-1)!);
    return count / ((performance.now() - started) / 1000);
  });
  let batchTps: number | undefined;
  if (options.batch) {
    raw = await presignedMints(env, count, await reserve());
    const started = performance.now();
    const answers = await rpcBatch(
      url,
      raw.map((tx) => ({ method: "eth_sendRawTransaction", params: [tx] })),
    );
    if (answers.some((a: any) => a.error)) throw new Error("batch send refused");
    await waitMined(env, raw.at(-1)!);
    batchTps = count / ((performance.now() - started) / 1000);
  }
  await resyncOperatorNonce(env);
  const caughtUpMs = await waitForIndexedHead(env);
  say(
    `raw chain (${env.mode}): ${sequentialTps.toFixed(0)} tx/s one at a time${batchTps ? `, ${batchTps.toFixed(0)} tx/s as one batch` : ""} (${count} mints; the index caught up ${(caughtUpMs / 1000).toFixed(1)} s later)`,
  );
  return { count, sequentialTps, batchTps, cpu };
}

/**
 * Waits until the indexer has reached the chain's head, so the next phase does not start with the indexer a
 * thousand raw blocks behind (its writes would wait for those blocks, and time out, for a reason of the bench's
 * own making); the time it took.
 */
async function waitForIndexedHead(env: BenchEnvironment): Promise<number> {
  const started = performance.now();
  const head = parseInt(await rpc(env.stack.rpcUrl, "eth_blockNumber", []), 16);
  if (!(await env.core.index.waitForBlock(head, 300_000)))
    throw new Error(`the index did not reach block ${head} in 5 minutes`);
  return performance.now() - started;
}

export interface WriteResult {
  concurrency: number;
  writes: number;
  perSecond: number;
  p50: number;
  p95: number;
  cpu: CpuUsage;
  /** Writes that returned before the index reached their block during this phase (from the API's logs). */
  readYourWritesTimeouts: number;
  /** Writes answered with another status than 201 (e.g. 504 when a receipt took too long), by first message. */
  failed: number;
  firstFailure?: string;
}

const createRequest = async (env: BenchEnvironment): Promise<string> => {
  const answer = await env.request("POST", "/requests", env.applicantToken, {
    applicantId: env.applicantId,
    requestType: "TRADE_LICENSE",
  });
  if (answer.status !== 201)
    throw new Error(`POST /requests answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.requestId as string;
};

/** Failed writes are counted, not fatal, unless they are more than a tenth: one slow receipt must not void a run. */
function checkFailures(total: number, failures: string[]): void {
  if (failures.length > Math.max(1, total / 10))
    throw new Error(`more than a tenth of the writes failed; first: ${failures[0]}`);
}

/** POST /requests from `concurrency` autocannon clients, `writes` in all. */
export async function measureWriteThroughput(
  env: BenchEnvironment,
  concurrency: number,
  writes: number,
): Promise<WriteResult> {
  const timeoutsBefore = await env.readYourWritesTimeouts();
  const { result: run, cpu } = await measureCpu(env.meter, () =>
    load(201, {
      url: `${env.api}/requests`,
      method: "POST",
      headers: { authorization: `Bearer ${env.applicantToken}`, "content-type": "application/json" },
      body: JSON.stringify({ applicantId: env.applicantId, requestType: "TRADE_LICENSE" }),
      connections: concurrency,
      amount: writes,
    }),
  );
  const { result: stats, latencies } = run;
  const failures = [
    ...run.failures.map((status) => `POST /requests answered ${status}`),
    ...Array.from({ length: stats.errors }, () => "POST /requests: no answer (connection error or timeout)"),
  ];
  checkFailures(writes, failures);
  const readYourWritesTimeouts = (await env.readYourWritesTimeouts()) - timeoutsBefore;
  // Throughput counts the writes that succeeded; CPU per write divides by every write sent (failures cost too).
  const result = {
    concurrency,
    writes,
    perSecond: latencies.length / stats.duration,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    cpu,
    readYourWritesTimeouts,
    failed: failures.length,
    firstFailure: failures[0],
  };
  say(
    `HTTP writes (${env.mode}), ${concurrency} client(s): ${result.perSecond.toFixed(1)} requests/s (latency p50 ${result.p50.toFixed(0)} / p95 ${result.p95.toFixed(0)} ms), ${(cpu.stackMs / writes).toFixed(1)} CPU-ms per write, ${readYourWritesTimeouts} read-your-writes timeouts`,
  );
  return result;
}

export interface VisibilityResult {
  concurrency: number;
  writes: number;
  p50: number;
  p95: number;
  /** Writes whose first read right after the 201 did not find them (read-your-writes broken for that client). */
  notVisibleAtReturn: number;
  readYourWritesTimeouts: number;
  failed: number;
}

/** Send → visible through the API: POST /requests, then GET /requests/{id} (every 5 ms) until it answers 200. */
export async function measureVisibility(
  env: BenchEnvironment,
  concurrency: number,
  writes: number,
): Promise<VisibilityResult> {
  const latencies: number[] = [];
  let notVisibleAtReturn = 0;
  const failures: string[] = [];
  const timeoutsBefore = await env.readYourWritesTimeouts();
  await runConcurrently(writes, concurrency, async () => {
    const started = performance.now();
    const id = await createRequest(env).catch((error) => {
      failures.push(error.message);
      checkFailures(writes, failures);
    });
    if (!id) return;
    for (let attempt = 0; ; attempt++) {
      const read = await env.request("GET", `/requests/${id}`, env.applicantToken);
      if (read.status === 200) break;
      if (read.status !== 404)
        throw new Error(`GET /requests/${id} answered ${read.status}: ${JSON.stringify(read.body)}`);
      if (attempt === 0) notVisibleAtReturn++;
      if (performance.now() - started > 60_000) throw new Error(`request ${id} not visible after 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    latencies.push(performance.now() - started);
  });
  const readYourWritesTimeouts = (await env.readYourWritesTimeouts()) - timeoutsBefore;
  const result = {
    concurrency,
    writes,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    notVisibleAtReturn,
    readYourWritesTimeouts,
    failed: failures.length,
  };
  say(
    `write → visible through the API (${env.mode}), ${concurrency} client(s): p50 ${result.p50.toFixed(0)} / p95 ${result.p95.toFixed(0)} ms; not visible at return: ${notVisibleAtReturn}`,
  );
  return result;
}
