import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { Wallet } from "ethers";
import { keccak256 } from "ethers";
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

  async function expectConsecutive(nonces: bigint[]) {
    const sorted = [...nonces].sort((a, b) => (a < b ? -1 : 1));
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i] - sorted[i - 1], `nonce gap or duplicate at ${sorted[i]}`).to.equal(1n);
    const onChain = await driver.core.provider.getTransactionCount(driver.admin, "latest");
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
    const nonceBefore = (await driver.core.wallets.all()).find((w) => w.address === driver.admin)!.nextNonce;
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
    expect((await driver.core.wallets.all()).find((w) => w.address === driver.admin)!.nextNonce).to.equal(nonceBefore);
  });

  it("finishes a transaction that was recorded but never broadcast (a crash between the two)", async function () {
    const { core, admin: operator } = driver;
    const signer = await core.wallets.signer(operator);
    const data = registry.encodeFunctionData("registerDepartment", [
      b32("RECORDED_NOT_SENT"),
      Wallet.createRandom().address,
      0,
    ]);
    const to = driver.addresses.ApprovalRegistry;
    const block = await core.provider.getBlock("latest");
    let hash = "";
    const crash = await new NonceSequencer(core.pool)
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
    const rows = await eventually("the outbox to settle (whichever process reconciles)", async () => {
      const result = await core.pool.query(`SELECT status, block_number FROM chain_transactions WHERE tx_hash = $1`, [
        hash,
      ]);
      return result.rows[0].status === "PENDING" ? undefined : result.rows;
    });
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
    const rows = await eventually("the outbox to settle (whichever process reconciles)", async () => {
      const result = await core.pool.query(
        `SELECT tx_hash, status, error_name, error_args FROM chain_transactions WHERE tx_hash = ANY($1) ORDER BY nonce`,
        [hashes],
      );
      return result.rows.some((r) => r.status === "PENDING") ? undefined : result.rows;
    });
    expect(rows.map((r) => r.status)).to.deep.equal(["CONFIRMED", "FAILED"]);
    expect(rows[1].error_name).to.equal("DepartmentAlreadyRegistered");
    expect(rows[1].error_args).to.deep.equal([b32(code)]);
    expect((await core.provider.getTransactionReceipt(hashes[1]))?.status).to.equal(0);
  });
});
