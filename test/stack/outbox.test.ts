import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { Wallet } from "ethers";
import { keccak256 } from "ethers";
import { NodeRefusedError } from "../../api/src/chain/chainErrors.ts";
import { broadcast } from "../../api/src/chain/chainGateway.ts";
import { NonceSequencer } from "../../api/src/chain/nonceSequencer.ts";
import { toAppError } from "../../api/src/http/errorMiddleware.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";
import { eventually } from "./support/eventually.ts";
import { current } from "./support/stackFixture.ts";
import { recordRacingTransactions } from "./support/racingTransactions.ts";
import { b32, createDriver, registry, type Driver } from "./support/platformDriver.ts";

const run = promisify(execFile);

describe("transaction outbox and nonce sequencing", function () {
  let driver: Driver;
  before(async () => (driver = await createDriver(current())));
  after(async () => driver.close());

  const register = (code: string) => driver.registerCode(code);

  /** The outbox rows of `hashes` in nonce order, once none is PENDING (whichever process reconciles them). */
  function settledRows(hashes: string[]) {
    return eventually("the outbox to settle (whichever process reconciles)", async () => {
      const result = await driver.core.pool.query(
        `SELECT status, block_number, error_name, error_args FROM chain_transactions WHERE tx_hash = ANY($1) ORDER BY nonce`,
        [hashes],
      );
      return result.rows.some((r) => r.status === "PENDING") ? undefined : result.rows;
    });
  }

  async function expectConsecutive(nonces: bigint[]) {
    const sorted = [...nonces].sort((a, b) => (a < b ? -1 : 1));
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i] - sorted[i - 1], `nonce gap or duplicate at ${sorted[i]}`).to.equal(1n);
    const onChain = await driver.core.provider.getTransactionCount(driver.governance, "latest");
    expect(BigInt(onChain)).to.equal(sorted[sorted.length - 1] + 1n);
  }

  it("gives concurrent writes from one wallet consecutive nonces, every one mined", async function () {
    const sent = await Promise.all(Array.from({ length: 30 }, (_, i) => register(`CONCURRENT_${i}`)));
    await expectConsecutive(sent.map((tx) => tx.nonce));
    const { rows } = await driver.core.pool.query(
      `SELECT status, count(*)::int AS n FROM chain_transactions WHERE tx_hash = ANY($1) GROUP BY status`,
      [sent.map((t) => t.hash)],
    );
    expect(rows).to.deep.equal([{ status: "CONFIRMED", n: 30 }]);
    for (const tx of sent) expect(tx.receipt.status).to.equal(1);
  });

  it("hears every receipt when writes start while others finish (no write waits out the receipt timeout)", async function () {
    // Staggered over a few event-loop turns, so waits begin in the very moments others end.
    const started = Date.now();
    const sent = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        for (let turn = 0; turn < i % 8; turn++) await new Promise(setImmediate);
        const tx = await register(`STAGGERED_${i}`);
        return { tx, ms: Date.now() - started };
      }),
    );
    for (const { tx } of sent) expect(tx.receipt.status).to.equal(1);
    expect(Math.max(...sent.map((s) => s.ms)), "slowest write (ms)").to.be.below(15_000);
  });

  it("keeps nonces consecutive when two processes write from the same wallet at once", async function () {
    const writer = path.join(REPO_ROOT, "test", "stack", "support", "gatewayWriter.ts");
    const env = { ...process.env, ...current().env };
    const outputs = await Promise.all(
      ["PROCESS_A", "PROCESS_B"].map((prefix) =>
        run(process.execPath, [writer, "20", prefix], { env, cwd: REPO_ROOT }),
      ),
    );
    const results = outputs.flatMap((o) => JSON.parse(o.stdout.trim().split("\n").pop()!)) as {
      hash?: string;
      nonce?: string;
      error?: string;
    }[];
    expect(results.filter((r) => r.error)).to.deep.equal([]);
    expect(results).to.have.length(40);
    await expectConsecutive(results.map((r) => BigInt(r.nonce!)));
    for (const r of results) expect((await driver.core.provider.getTransactionReceipt(r.hash!))?.status).to.equal(1);
  });

  it("refuses a call the contract would revert before recording anything or using a nonce", async function () {
    await register("ONLY_ONCE");
    const before = await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions`);
    const nonceBefore = (await driver.core.wallets.all()).find((w) => w.address === driver.governance)!.nextNonce;
    const error = await register("ONLY_ONCE").then(
      () => undefined,
      (e) => e,
    );
    const answer = toAppError(error);
    expect(answer.code).to.equal("CHAIN_REJECTED");
    expect(answer.details).to.deep.include({ error: "DepartmentAlreadyRegistered" });
    expect(answer.status).to.equal(409);
    const afterCount = await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions`);
    expect(afterCount.rows[0].n).to.equal(before.rows[0].n);
    expect((await driver.core.wallets.all()).find((w) => w.address === driver.governance)!.nextNonce).to.equal(
      nonceBefore,
    );
  });

  it("finishes a transaction that was recorded but never broadcast (a crash between the two)", async function () {
    const { core, governance: operator } = driver;
    const signer = await core.wallets.signer(operator);
    await core.wallets.catchUpNonce(operator);
    const wallet = Wallet.createRandom();
    const data = registry.encodeFunctionData("registerDepartment", [
      b32("RECORDED_NOT_SENT"),
      wallet.address,
      0,
      await driver.keyProof("RECORDED_NOT_SENT", wallet.address, 0, wallet),
    ]);
    const to = driver.addresses.ApprovalRegistry;
    const block = await core.provider.getBlock("latest");
    let hash = "";
    const crash = await new NonceSequencer(core.pool, (...args) => core.gateway.recordNonceFiller(...args))
      .run(operator, {
        record: async ({ nonce, client }) => {
          const raw = await signer.signTransaction({
            type: 2,
            chainId: current().config.chainId,
            nonce: Number(nonce),
            to,
            data,
            gasLimit: 300_000n,
            maxFeePerGas: block!.baseFeePerGas! * 3n,
            maxPriorityFeePerGas: 1n,
          });
          hash = keccak256(raw);
          const id = crypto.randomUUID();
          await client.query(
            `INSERT INTO chain_transactions (id, kind, status, from_address, nonce, to_address, data, raw_tx, tx_hash, gas_limit, created_at)
             VALUES ($1, 'REGISTER_DEPARTMENT', 'PENDING', $2, $3, $4, $5, $6, $7, 300000, now() - interval '1 minute')`,
            [id, operator.toLowerCase(), nonce.toString(), to.toLowerCase(), data, raw, hash],
          );
          return { id, nonce };
        },
        broadcast: async () => {
          throw new Error("simulated crash before broadcast");
        },
      })
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(crash?.message).to.equal("simulated crash before broadcast");
    expect(await core.provider.getTransactionReceipt(hash)).to.equal(null);

    await core.gateway.reconcile();
    const rows = await settledRows([hash]);
    const receipt = await core.provider.getTransactionReceipt(hash);
    expect(receipt?.status).to.equal(1);
    expect(rows[0].status).to.equal("CONFIRMED");
    expect(Number(rows[0].block_number)).to.equal(receipt!.blockNumber);
    // And the wallet keeps working: the next write gets the next nonce.
    const next = await register("AFTER_RECONCILE");
    expect(next.receipt.status).to.equal(1);
  });

  it("marks a recorded transaction that reverted on chain FAILED with the decoded custom error", async function () {
    const { core } = driver;
    const code = `REVERTS_${Date.now()}`;
    const hashes = await recordRacingTransactions(driver, { code, aged: true });
    await core.gateway.reconcile();
    const rows = await settledRows(hashes);
    expect(rows.map((r) => r.status)).to.deep.equal(["CONFIRMED", "FAILED"]);
    expect(rows[1].error_name).to.equal("DepartmentAlreadyRegistered");
    expect(rows[1].error_args).to.deep.equal([b32(code)]);
    expect((await core.provider.getTransactionReceipt(hashes[1]))?.status).to.equal(0);
  });

  it("names the custom error of a transaction that reverted because an earlier one of its block won the race", async function () {
    const { core } = driver;
    const code = `SAME_BLOCK_${Date.now()}`;
    const hashes = await recordRacingTransactions(driver, { code, aged: true });
    const { rows: raws } = await core.pool.query(
      `SELECT raw_tx FROM chain_transactions WHERE tx_hash = ANY($1) ORDER BY nonce`,
      [hashes],
    );
    // Both in one block, as on a chain with a block period: replayed before that block, the second would pass.
    await core.provider.send("evm_setAutomine", [false]);
    try {
      for (const { raw_tx } of raws) await core.provider.send("eth_sendRawTransaction", [raw_tx]);
      await core.provider.send("evm_mine", []);
    } finally {
      await core.provider.send("evm_setAutomine", [true]);
    }
    const receipts = await Promise.all(hashes.map((hash) => core.provider.getTransactionReceipt(hash)));
    expect(receipts.map((r) => r?.status)).to.deep.equal([1, 0]);
    expect(receipts[1]!.blockNumber).to.equal(receipts[0]!.blockNumber);
    await core.gateway.reconcile();
    const rows = await settledRows(hashes);
    expect(rows.map((r) => r.status)).to.deep.equal(["CONFIRMED", "FAILED"]);
    expect(rows[1].error_name).to.equal("DepartmentAlreadyRegistered");
    expect(rows[1].error_args).to.deep.equal([b32(code)]);
  });

  describe("a broadcast the node refuses outright (one JSON-RPC batch per wallet batch)", function () {
    /**
     * Three jobs queued at once from a fresh wallet, so the sequencer records and broadcasts them as one batch;
     * `gasLimits` chooses which the node refuses (a gas limit above the block's: "intrinsic gas too high").
     */
    async function sendBatch(gasLimits: bigint[]) {
      const { core } = driver;
      const wallet = await core.wallets.create("DEPARTMENT", `REFUSALS_${Date.now()}`);
      const signer = await core.wallets.signer(wallet);
      const block = await core.provider.getBlock("latest");
      const sequencer = new NonceSequencer(core.pool, (address, nonce, client) =>
        core.gateway.recordNonceFiller(address, nonce, client),
      );
      const outcomes = await Promise.allSettled(
        gasLimits.map((gasLimit) =>
          sequencer.run(wallet, {
            record: async ({ nonce, client }) => {
              const raw = await signer.signTransaction({
                type: 2,
                chainId: current().config.chainId,
                nonce: Number(nonce),
                to: wallet,
                data: "0x",
                gasLimit,
                maxFeePerGas: block!.baseFeePerGas! * 3n,
                maxPriorityFeePerGas: 1n,
              });
              const tx = { id: crypto.randomUUID(), nonce, raw, hash: keccak256(raw) };
              await client.query(
                `INSERT INTO chain_transactions (id, kind, status, from_address, nonce, to_address, data, raw_tx, tx_hash, gas_limit)
                 VALUES ($1, 'ADMIN', 'PENDING', $2, $3, $2, '0x', $4, $5, $6)`,
                [tx.id, wallet.toLowerCase(), nonce.toString(), raw, tx.hash, gasLimit.toString()],
              );
              return tx;
            },
            broadcast: (tx) => broadcast(core.provider, tx.raw),
          }),
        ),
      );
      const rows = async () =>
        (
          await core.pool.query(
            `SELECT kind, status, nonce::int AS nonce, nonce_released, tx_hash FROM chain_transactions
             WHERE from_address = $1 ORDER BY created_at, nonce`,
            [wallet.toLowerCase()],
          )
        ).rows;
      const nextNonce = async () =>
        Number(
          (await core.pool.query(`SELECT next_nonce FROM wallets WHERE address = $1`, [wallet.toLowerCase()])).rows[0]
            .next_nonce,
        );
      return { wallet, outcomes, rows, nextNonce };
    }
    const TOO_MUCH = 40_000_000n; // above anvil's 30M block gas limit

    it("fills the nonce of a refused transaction when a later one of the batch waits for it, and the later one is mined", async function () {
      const { core } = driver;
      const { wallet, outcomes, rows, nextNonce } = await sendBatch([100_000n, TOO_MUCH, 100_000n]);
      expect(outcomes.map((o) => o.status)).to.deep.equal(["fulfilled", "rejected", "fulfilled"]);
      expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(NodeRefusedError);
      // The later transaction and the filler are mined: the wallet's nonce on chain moves past all three.
      await eventually("the chain to take nonces 0..2", async () =>
        (await core.provider.getTransactionCount(wallet, "latest")) === 3 ? true : undefined,
      );
      const recorded = await rows();
      expect(recorded.map((r) => [r.kind, r.nonce, r.nonce_released])).to.deep.equal([
        ["ADMIN", 0, false],
        ["ADMIN", 1, true],
        ["ADMIN", 2, false],
        ["NONCE_FILLER", 1, false],
      ]);
      expect(recorded[1].status).to.equal("FAILED");
      expect((await core.provider.getTransactionReceipt(recorded[2].tx_hash))?.status).to.equal(1);
      expect((await core.provider.getTransactionReceipt(recorded[3].tx_hash))?.status).to.equal(1);
      expect(await core.provider.getTransactionReceipt(recorded[1].tx_hash)).to.equal(null);
      expect(await nextNonce()).to.equal(3);
    });

    it("gives back the nonces from the first refused transaction when nothing after it was taken", async function () {
      const { core } = driver;
      const { wallet, outcomes, rows, nextNonce } = await sendBatch([100_000n, TOO_MUCH, TOO_MUCH]);
      expect(outcomes.map((o) => o.status)).to.deep.equal(["fulfilled", "rejected", "rejected"]);
      const recorded = await rows();
      expect(recorded.map((r) => [r.status, r.nonce, r.nonce_released])).to.deep.include.members([
        ["FAILED", 1, true],
        ["FAILED", 2, true],
      ]);
      expect(recorded.filter((r) => r.kind === "NONCE_FILLER")).to.deep.equal([]);
      expect(await nextNonce()).to.equal(1);
      await eventually("the first to be mined", async () =>
        (await core.provider.getTransactionCount(wallet, "latest")) === 1 ? true : undefined,
      );
    });
  });
});
