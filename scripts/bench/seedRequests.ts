/**
 * Seeds N licence requests the way the API would have them, fast enough for 100,000:
 * - on chain: `LicenceToken.mint` from the operator, sent with anvil's account impersonation (no client-side
 *   signing) in JSON-RPC batches of 1,000 while automine is off, then mined in blocks of ~480 (the block gas limit);
 * - in the index: by the real Ponder indexer, which the seeding waits for;
 * - in the API's tables: one outbox record (CONFIRMED, the real transaction hash) and one request row per token,
 *   inserted in bulk, across 1,000 applicants and the three request types.
 * The seeded outbox rows have no signed bytes (`raw_tx` empty): they are never re-broadcast (the bench stack is
 * thrown away afterwards).
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { zeroHash } from "viem";
import { stringToBytes32 } from "../../abis/index.ts";
import { applicantAddress } from "../../api/src/chain/applicantKeys.ts";
import { hexBytes, licenceTokenCall } from "../../api/src/chain/contractCalls.ts";
import { REQUEST_NUMBER_PREFIX } from "../../api/src/domain/requests/createRequest.ts";
import { rpc } from "../stack/localChain.ts";
import {
  reserveTokenIds,
  resyncOperatorNonce,
  rpcBatch,
  say,
  sleep,
  type BenchEnvironment,
} from "./benchEnvironment.ts";

const TYPES = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"] as const;
const APPLICANTS = 1_000;

export type Seeded = Awaited<ReturnType<typeof seedRequests>>;

export async function seedRequests(env: BenchEnvironment, count: number) {
  const applicants = Array.from({ length: APPLICANTS }, (_, i) => `seed-applicant-${i}`);
  const addresses = applicants.map((id) => applicantAddress(env.custody, id));
  const firstTokenId = await reserveTokenIds(env, count);
  const firstNonce = await env.core.provider.getTransactionCount(env.stack.operatorAddress, "pending");
  const calls = Array.from({ length: count }, (_, i) =>
    licenceTokenCall("mint", [
      hexBytes(addresses[i % APPLICANTS]),
      firstTokenId + BigInt(i),
      stringToBytes32(TYPES[i % 3]),
      zeroHash,
    ]),
  );
  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const started = performance.now();
    return [await work(), (performance.now() - started) / 1000];
  };

  const [hashes, chainSeconds] = await timed(() => mintOnChain(env, calls, firstNonce));
  await resyncOperatorNonce(env);
  const [requestIds, rowsSeconds] = await timed(async () => {
    const now = Date.now();
    const requestIds: string[] = [];
    for (let start = 0; start < count; start += 10_000) {
      const index = Array.from({ length: Math.min(count, start + 10_000) - start }, (_, k) => start + k);
      requestIds.push(
        ...(await insertRows(env, index, {
          applicants,
          addresses,
          firstTokenId,
          firstNonce,
          calls,
          hashes,
          count,
          now,
        })),
      );
    }
    return requestIds;
  });
  // Until the real indexer has a licence row for every seeded token.
  const [, indexSeconds] = await timed(async () => {
    for (;;) {
      const { rows } = await env.core.pool.query(
        `SELECT count(*)::int AS n FROM index.licences WHERE token_id >= $1 AND token_id < $2`,
        [firstTokenId.toString(), (firstTokenId + BigInt(count)).toString()],
      );
      process.stdout.write(`  indexing: ${rows[0].n}/${count}            \r`);
      if (rows[0].n >= count) return;
      await sleep(1_000);
    }
  });
  // As the database's owner: the API's role may not analyze the indexer's tables, whose statistics would then still
  // say "empty" (autovacuum gets to them within a minute or so, in the middle of the read measurements), and the
  // planner would walk 100,000 licences to find a page of 20. VACUUM as well: otherwise autovacuum visits the new
  // rows during the read measurements (its CPU lands there).
  const owner = new pg.Client({ connectionString: env.stack.databaseUrl });
  await owner.connect();
  await owner.query("VACUUM ANALYZE").finally(() => owner.end());
  say(
    `seeded ${count} requests: chain ${chainSeconds.toFixed(0)} s, rows ${rowsSeconds.toFixed(0)} s, index caught up after ${indexSeconds.toFixed(0)} s more`,
  );
  return { count, firstTokenId, requestIds };
}

/**
 * The mints, sent from the operator by impersonation in batches of 1,000 with automine off and mined as they go;
 * returns each one's transaction hash. anvil's pool has been seen to drop impersonated transactions while it writes
 * a state snapshot: when the pool is empty and some are still missing, they are sent again.
 */
async function mintOnChain(env: BenchEnvironment, calls: string[], firstNonce: number): Promise<string[]> {
  const url = env.stack.rpcUrl;
  const from = env.stack.operatorAddress;
  const to = env.stack.deployment.contracts.LicenceToken;
  const hashes: string[] = [];
  const send = async (start: number, end: number) => {
    const batch = calls.slice(start, end).map((data, k) => ({
      method: "eth_sendTransaction",
      params: [{ from, to, data, gas: "0x30d40", nonce: `0x${(firstNonce + start + k).toString(16)}` }],
    }));
    for (const answer of await rpcBatch(url, batch)) {
      if (!answer.result) throw new Error(`seeding send refused: ${JSON.stringify(answer.error)}`);
      hashes[start + answer.id] = answer.result;
    }
  };
  await rpc(url, "anvil_impersonateAccount", [from]);
  await rpc(url, "evm_setAutomine", [false]);
  try {
    for (let start = 0; start < calls.length; start += 1_000) {
      const end = Math.min(calls.length, start + 1_000);
      await send(start, end);
      // Mine what is queued so the pool never holds more than a few batches.
      for (;;) {
        const mined = parseInt(await rpc(url, "eth_getTransactionCount", [from, "latest"]), 16);
        if (mined >= firstNonce + end) break;
        const pool = await rpc(url, "txpool_status", []);
        if (parseInt(pool.pending, 16) + parseInt(pool.queued, 16) === 0) await send(mined - firstNonce, end);
        await rpc(url, "evm_mine", []);
      }
      process.stdout.write(`  seeding on chain: ${end}/${calls.length}\r`);
    }
  } finally {
    await rpc(url, "evm_setAutomine", [true]);
    await rpc(url, "anvil_stopImpersonatingAccount", [from]);
  }
  return hashes;
}

/**
 * One outbox record (CONFIRMED, the real hash) and one request row per token of `index`, as if created one a second
 * over the last hours, the oldest first (distinct times, as real ones); returns the request ids.
 */
async function insertRows(
  env: BenchEnvironment,
  index: number[],
  seed: {
    applicants: string[];
    addresses: string[];
    firstTokenId: bigint;
    firstNonce: number;
    calls: string[];
    hashes: string[];
    count: number;
    now: number;
  },
): Promise<string[]> {
  const { pool } = env.core;
  const ids = index.map(() => randomUUID());
  const txIds = index.map(() => randomUUID());
  const year = new Date().getUTCFullYear();
  await pool.query(
    `INSERT INTO chain_transactions (id, kind, status, from_address, nonce, to_address, data, raw_tx, tx_hash, gas_limit, request_id, broadcasts, confirmed_at)
     SELECT t, 'MINT_NFT', 'CONFIRMED', $1, n, $2, d, '', h, 200000, r, 1, now() FROM unnest($3::uuid[], $4::bigint[], $5::text[], $6::text[], $7::uuid[]) AS u(t, n, d, h, r)`,
    [
      env.stack.operatorAddress.toLowerCase(),
      env.stack.deployment.contracts.LicenceToken.toLowerCase(),
      txIds,
      index.map((i) => seed.firstNonce + i),
      index.map((i) => seed.calls[i]),
      index.map((i) => seed.hashes[i]),
      ids,
    ],
  );
  await pool.query(
    `INSERT INTO requests (id, request_number, token_id, request_type, applicant_id, applicant_name, applicant_email, applicant_address, metadata, created_by, chain_tx_id, created_at, updated_at)
     SELECT r, num, tok, ty, a, 'Seeded Applicant', '', addr, '{}', 'seed', t, c, c
     FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::uuid[], $8::timestamptz[]) AS u(r, num, tok, ty, a, addr, t, c)`,
    [
      ids,
      index.map((i) => `${REQUEST_NUMBER_PREFIX[TYPES[i % 3]]}-${year}-S${String(i + 1).padStart(6, "0")}`),
      index.map((i) => (seed.firstTokenId + BigInt(i)).toString()),
      index.map((i) => TYPES[i % 3]),
      index.map((i) => seed.applicants[i % APPLICANTS]),
      index.map((i) => seed.addresses[i % APPLICANTS].toLowerCase()),
      txIds,
      index.map((i) => new Date(seed.now - (seed.count - i) * 1000)),
    ],
  );
  return ids;
}
