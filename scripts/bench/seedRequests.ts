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
import { hexBytes, licenceTokenCall } from "../../api/src/chain/contractCalls.ts";
import { applicantAddress } from "../../api/src/chain/applicantKeys.ts";
import { REQUEST_NUMBER_PREFIX } from "../../api/src/domain/requests/createRequest.ts";
import { developmentSecret } from "../../api/src/developmentSecrets.ts";
import { rpc } from "../stack/localChain.ts";
import { reserveTokenIds, rpcBatch, say, type BenchEnvironment } from "./benchEnvironment.ts";

const TYPES = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"] as const;
const APPLICANTS = 1_000;

export interface Seeded {
  count: number;
  firstTokenId: bigint;
  requestIds: string[];
  seconds: { chain: number; rows: number; index: number };
}

export async function seedRequests(env: BenchEnvironment, count: number): Promise<Seeded> {
  const { config } = env;
  const custody = config.custodySecret ?? (await developmentSecret(config.dataDir, "custody.key"));
  const applicants = Array.from({ length: APPLICANTS }, (_, i) => `seed-applicant-${i}`);
  const addresses = applicants.map((id) => applicantAddress(custody, id));
  const firstTokenId = await reserveTokenIds(env, count);
  const firstNonce = await env.core.provider.getTransactionCount(env.stack.operatorAddress, "pending");

  const chainStarted = performance.now();
  const { calls, hashes } = await mintOnChain(env, { count, addresses, firstTokenId, firstNonce });
  const chainSeconds = (performance.now() - chainStarted) / 1000;
  // The operator's outbox nonce moves past what was sent behind the API's back.
  await env.core.pool.query(`UPDATE wallets SET next_nonce = GREATEST(next_nonce, $2) WHERE address = $1`, [
    env.stack.operatorAddress.toLowerCase(),
    firstNonce + count,
  ]);

  const rowsStarted = performance.now();
  const requestIds = await insertSeededRows(env, {
    count,
    applicants,
    addresses,
    firstTokenId,
    firstNonce,
    calls,
    hashes,
  });
  const rowsSeconds = (performance.now() - rowsStarted) / 1000;

  const indexStarted = performance.now();
  await waitForIndex(env, firstTokenId, count);
  const indexSeconds = (performance.now() - indexStarted) / 1000;
  // As the database's owner: the API's role may not analyze the indexer's tables, whose statistics would then still
  // say "empty" (autovacuum gets to them within a minute or so, in the middle of the read measurements), and the
  // planner would walk 100,000 licences to find a page of 20. VACUUM as well: otherwise autovacuum visits the new
  // rows during the read measurements (its CPU lands there).
  const owner = new pg.Client({ connectionString: env.stack.databaseUrl });
  await owner.connect();
  try {
    await owner.query("VACUUM ANALYZE");
  } finally {
    await owner.end();
  }
  say(
    `seeded ${count} requests: chain ${chainSeconds.toFixed(0)} s, rows ${rowsSeconds.toFixed(0)} s, index caught up after ${indexSeconds.toFixed(0)} s more`,
  );
  return { count, firstTokenId, requestIds, seconds: { chain: chainSeconds, rows: rowsSeconds, index: indexSeconds } };
}

interface Minting {
  count: number;
  addresses: string[];
  firstTokenId: bigint;
  firstNonce: number;
}

/**
 * The mints, sent from the operator by impersonation in batches of 1,000 with automine off and mined as they go;
 * returns each one's calldata and transaction hash.
 */
async function mintOnChain(env: BenchEnvironment, minting: Minting): Promise<{ calls: string[]; hashes: string[] }> {
  const { count, addresses, firstTokenId, firstNonce } = minting;
  const url = env.stack.rpcUrl;
  const operator = env.stack.operatorAddress;
  await rpc(url, "anvil_impersonateAccount", [operator]);
  await rpc(url, "evm_setAutomine", [false]);
  const hashes: string[] = [];
  const calls: string[] = [];
  try {
    const send = async (from: number, to: number) => {
      const batch = [];
      for (let i = from; i < to; i++) {
        calls[i] ??= licenceTokenCall("mint", [
          hexBytes(addresses[i % APPLICANTS]),
          firstTokenId + BigInt(i),
          stringToBytes32(TYPES[i % 3]),
          zeroHash,
        ]);
        const nonce = `0x${(firstNonce + i).toString(16)}`;
        const to = env.stack.deployment.contracts.LicenceToken;
        batch.push({
          method: "eth_sendTransaction",
          params: [{ from: operator, to, data: calls[i], gas: "0x30d40", nonce }],
        });
      }
      for (const answer of await rpcBatch(url, batch)) {
        if (!answer.result) throw new Error(`seeding send refused: ${JSON.stringify(answer.error)}`);
        hashes[from + answer.id] = answer.result;
      }
    };
    for (let start = 0; start < count; start += 1_000) {
      const end = Math.min(count, start + 1_000);
      await send(start, end);
      // Mine what is queued so the pool never holds more than a few batches.
      await mineAll(url, operator, firstNonce, end, send);
      process.stdout.write(`  seeding on chain: ${end}/${count}\r`);
    }
  } finally {
    await rpc(url, "evm_setAutomine", [true]);
    await rpc(url, "anvil_stopImpersonatingAccount", [operator]);
  }
  return { calls, hashes };
}

/**
 * One outbox record (CONFIRMED, the real hash) and one request row per token, inserted 10,000 at a time, as if
 * created one a second over the last hours; returns the request ids.
 */
async function insertSeededRows(
  env: BenchEnvironment,
  seeded: Minting & { applicants: string[]; calls: string[]; hashes: string[] },
): Promise<string[]> {
  const { count, applicants, addresses, firstTokenId, firstNonce, calls, hashes } = seeded;
  const { core, stack } = env;
  const operator = stack.operatorAddress;
  const requestIds: string[] = [];
  const year = new Date().getUTCFullYear();
  const seededUntil = Date.now();
  for (let start = 0; start < count; start += 10_000) {
    const n = Math.min(count, start + 10_000) - start;
    const ids = Array.from({ length: n }, () => randomUUID());
    const txIds = Array.from({ length: n }, () => randomUUID());
    const index = Array.from({ length: n }, (_, k) => start + k);
    requestIds.push(...ids);
    await core.pool.query(
      `INSERT INTO chain_transactions (id, kind, status, from_address, nonce, to_address, data, raw_tx, tx_hash, gas_limit, request_id, broadcasts, confirmed_at)
       SELECT t, 'MINT_NFT', 'CONFIRMED', $1, n, $2, d, '', h, 200000, r, 1, now() FROM unnest($3::uuid[], $4::bigint[], $5::text[], $6::text[], $7::uuid[]) AS u(t, n, d, h, r)`,
      [
        operator.toLowerCase(),
        stack.deployment.contracts.LicenceToken.toLowerCase(),
        txIds,
        index.map((i) => firstNonce + i),
        index.map((i) => calls[i]),
        index.map((i) => hashes[i]),
        ids,
      ],
    );
    await core.pool.query(
      `INSERT INTO requests (id, request_number, token_id, request_type, applicant_id, applicant_name, applicant_email, applicant_address, metadata, created_by, chain_tx_id, created_at, updated_at)
       SELECT r, num, tok, ty, a, 'Seeded Applicant', '', addr, '{}', 'seed', t, c, c
       FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::uuid[], $8::timestamptz[]) AS u(r, num, tok, ty, a, addr, t, c)`,
      [
        ids,
        index.map((i) => `${REQUEST_NUMBER_PREFIX[TYPES[i % 3]]}-${year}-S${String(i + 1).padStart(6, "0")}`),
        index.map((i) => (firstTokenId + BigInt(i)).toString()),
        index.map((i) => TYPES[i % 3]),
        index.map((i) => applicants[i % APPLICANTS]),
        index.map((i) => addresses[i % APPLICANTS].toLowerCase()),
        txIds,
        // One request a second, the oldest first, as if created over the last ~28 hours (distinct times, as real ones).
        index.map((i) => new Date(seededUntil - (count - i) * 1000)),
      ],
    );
  }
  return requestIds;
}

/** Waits until the real indexer has a licence row for every seeded token. */
async function waitForIndex(env: BenchEnvironment, firstTokenId: bigint, count: number): Promise<void> {
  for (;;) {
    const { rows } = await env.core.pool.query(
      `SELECT count(*)::int AS n FROM index.licences WHERE token_id >= $1 AND token_id < $2`,
      [firstTokenId.toString(), (firstTokenId + BigInt(count)).toString()],
    );
    process.stdout.write(`  indexing: ${rows[0].n}/${count}            \r`);
    if (rows[0].n >= count) return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/**
 * Mines blocks until the transactions of `account` up to index `end` are in one. anvil's pool has been seen to drop
 * impersonated transactions while it writes a state snapshot: when the pool is empty and some are still missing,
 * they are sent again.
 */
async function mineAll(
  url: string,
  account: string,
  firstNonce: number,
  end: number,
  send: (from: number, to: number) => Promise<void>,
): Promise<void> {
  for (;;) {
    const mined = parseInt(await rpc(url, "eth_getTransactionCount", [account, "latest"]), 16);
    if (mined >= firstNonce + end) return;
    const pool = await rpc(url, "txpool_status", []);
    if (parseInt(pool.pending, 16) + parseInt(pool.queued, 16) === 0) await send(mined - firstNonce, end);
    await rpc(url, "evm_mine", []);
  }
}
