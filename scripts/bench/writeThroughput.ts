/**
 * Write throughput. Raw: pre-signed `LicenceToken.mint` transactions from the operator sent straight to the node,
 * one at a time (each accepted before the next is sent), then as one JSON-RPC batch. End to end: POST /requests
 * over HTTP (outbox record → broadcast → receipt → index → response) with 1, 8 and 32 concurrent clients.
 */
import { ZeroHash, encodeBytes32String, keccak256 } from "ethers";
import { licenceToken } from "../../api/src/chain/contracts.ts";
import { applicantAddress } from "../../api/src/chain/applicantKeys.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { jsonRpc, percentile, reserveTokenIds, runConcurrently, say, type BenchEnvironment } from "./benchEnvironment.ts";

export interface RawThroughput {
  sequentialTps: number;
  batchTps: number;
}

/** Mints of TRADE_LICENSE tokens to the bench applicant's custodial address, signed here with the operator key. */
async function presignedMints(env: BenchEnvironment, count: number, firstTokenId: bigint): Promise<string[]> {
  const { core, stack, config } = env;
  const operator = stack.operatorAddress;
  const signer = await core.wallets.signer(operator);
  const owner = applicantAddress(config.custodySecret ?? (await developmentSecret(config.dataDir, "custody.key")), env.applicantId);
  const nonce = await core.provider.getTransactionCount(operator, "pending");
  const block = await core.provider.getBlock("latest");
  const raw: string[] = [];
  for (let i = 0; i < count; i++) {
    raw.push(await signer.signTransaction({
      type: 2, chainId: config.chainId, nonce: nonce + i, to: stack.deployment.contracts.LicenceToken, gasLimit: 200_000n,
      maxFeePerGas: block!.baseFeePerGas! * 4n + 1_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n,
      data: licenceToken.encodeFunctionData("mint", [owner, firstTokenId + BigInt(i), encodeBytes32String("TRADE_LICENSE"), ZeroHash]),
    }));
  }
  return raw;
}

/** Moves the operator's outbox nonce past what was sent behind the API's back. */
async function resyncOperatorNonce(env: BenchEnvironment): Promise<void> {
  const pending = await env.core.provider.getTransactionCount(env.stack.operatorAddress, "pending");
  await env.core.pool.query(`UPDATE wallets SET next_nonce = GREATEST(next_nonce, $2) WHERE address = $1`, [env.stack.operatorAddress.toLowerCase(), pending]);
}

async function waitMined(env: BenchEnvironment, lastRaw: string): Promise<void> {
  const hash = keccak256(lastRaw);
  while (!(await env.core.provider.getTransactionReceipt(hash))) await new Promise((r) => setTimeout(r, 5));
}

export async function measureRawThroughput(env: BenchEnvironment, count: number): Promise<RawThroughput> {
  const url = env.stack.rpcUrl;
  const reserve = () => reserveTokenIds(env, count);
  // One at a time.
  let raw = await presignedMints(env, count, await reserve());
  let started = performance.now();
  for (const tx of raw) {
    await jsonRpc(url, { jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: [tx] });
  }
  await waitMined(env, raw.at(-1)!);
  const sequentialTps = count / ((performance.now() - started) / 1000);
  // As one batch.
  raw = await presignedMints(env, count, await reserve());
  started = performance.now();
  const answers = await jsonRpc(url, raw.map((tx, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [tx] })));
  if (answers.some((a: any) => a.error)) throw new Error("batch send refused");
  await waitMined(env, raw.at(-1)!);
  const batchTps = count / ((performance.now() - started) / 1000);
  await resyncOperatorNonce(env);
  say(`raw chain: ${sequentialTps.toFixed(0)} tx/s one at a time, ${batchTps.toFixed(0)} tx/s as one batch (${count} mints each)`);
  return { sequentialTps, batchTps };
}

export interface WriteResult {
  concurrency: number;
  writes: number;
  perSecond: number;
  p50: number;
  p95: number;
}

export async function measureWriteThroughput(env: BenchEnvironment, concurrency: number, writes: number): Promise<WriteResult> {
  const latencies: number[] = [];
  const elapsed = await runConcurrently(writes, concurrency, async () => {
    const started = performance.now();
    const answer = await env.request("POST", "/requests", env.applicantToken, { applicantId: env.applicantId, requestType: "TRADE_LICENSE" });
    if (answer.status !== 201) throw new Error(`POST /requests answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    latencies.push(performance.now() - started);
  });
  const result = { concurrency, writes, perSecond: writes / (elapsed / 1000), p50: percentile(latencies, 50), p95: percentile(latencies, 95) };
  say(`HTTP writes, ${concurrency} client(s): ${result.perSecond.toFixed(1)} requests/s (latency p50 ${result.p50.toFixed(0)} / p95 ${result.p95.toFixed(0)} ms)`);
  return result;
}
