import { expect } from "chai";
import type { ConfirmedTx } from "../../api/src/chain/chainGateway.ts";
import { eventually } from "./support/eventually.ts";
import { current, startFixtureStack, stopFixtureStack } from "./support/stackFixture.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";

const health = async () => {
  const response = await fetch(`${current().api.url}/health`);
  return { status: response.status, body: (await response.json()) as { status: string; notReady: string[] } };
};

describe("restarts and failures", function () {
  let driver: Driver;
  beforeEach(async () => (driver = await createDriver(current())));
  afterEach(async () => driver.close());

  const register = (code: string) => driver.registerCode(code);

  it("answers /health 503 naming the chain while it is stopped, and 200 once it is back", async function () {
    expect((await health()).status).to.equal(200);
    await current().stopChain("clean");
    const down = await health();
    expect(down.status).to.equal(503);
    expect(down.body.status).to.equal("unavailable");
    expect(down.body.notReady).to.include("chain");
    await current().startChain();
    await eventually("health 200", async () => ((await health()).status === 200 ? true : undefined));
  });

  it("converges after the chain is killed uncleanly: lost transactions re-broadcast with the same hashes", async function () {
    const stack = current();
    await register(`BEFORE_KILL_${Date.now()}`);
    await stack.chain!.snapshot();
    const snapshotHead = await driver.core.provider.getBlockNumber();
    const sent: ConfirmedTx[] = [];
    for (let i = 0; i < 8; i++) sent.push(await register(`LOST_${Date.now()}_${i}`));
    expect(sent[7].blockNumber).to.equal(snapshotHead + 8);

    await stack.restartChain("unclean");
    // The chain came back from the snapshot: the last 8 blocks are gone.
    expect(await driver.core.provider.getBlockNumber()).to.equal(snapshotHead);
    expect(await driver.core.provider.getTransactionReceipt(sent[0].hash)).to.equal(null);

    // The API's reconciler notices and re-broadcasts the recorded bytes in their original order.
    const receipts = await eventually("every lost transaction mined again", async () => {
      const all = await Promise.all(sent.map((tx) => driver.core.provider.getTransactionReceipt(tx.hash)));
      return all.every((r) => r?.status === 1) ? all : undefined;
    });
    const nonces = receipts.map((r) => r!.index >= 0 && r!.hash);
    expect(nonces).to.deep.equal(sent.map((tx) => tx.hash)); // same hashes, same order
    expect(receipts.map((r) => r!.blockNumber)).to.deep.equal(sent.map((_, i) => snapshotHead + 1 + i));

    // Outbox, chain and index agree again, with each transaction exactly once.
    await eventually("outbox confirmed at the new blocks", async () => {
      const { rows } = await driver.core.pool.query(
        `SELECT tx_hash, status, block_number, block_hash FROM chain_transactions WHERE tx_hash = ANY($1)`,
        [sent.map((s) => s.hash)],
      );
      return rows.length === 8 &&
        rows.every(
          (r) =>
            r.status === "CONFIRMED" && receipts.some((x) => x!.hash === r.tx_hash && x!.blockHash === r.block_hash),
        )
        ? rows
        : undefined;
    });
    const indexed = await eventually("index mirrors the new blocks", async () => {
      const { rows } = await driver.index.query(
        `SELECT hash, block_number, block_hash FROM transactions WHERE hash = ANY($1)`,
        [sent.map((s) => s.hash)],
      );
      return rows.length === 8 &&
        rows.every((r) => receipts.some((x) => x!.hash === r.hash && x!.blockHash === r.block_hash))
        ? rows
        : undefined;
    });
    expect(indexed).to.have.length(8);
    const wallets = await driver.core.wallets.all();
    const operator = wallets.find((w) => w.address === driver.operator)!;
    expect(BigInt(await driver.core.provider.getTransactionCount(driver.operator, "latest"))).to.equal(
      operator.nextNonce,
    );
    // Writes keep working.
    expect((await register(`AFTER_KILL_${Date.now()}`)).receipt.status).to.equal(1);
  });

  it("keeps chain, index and database consistent across a stop and a restart of the whole stack", async function () {
    const last = await register(`BEFORE_RESTART_${Date.now()}`);
    const before = {
      head: await driver.core.provider.getBlock("latest"),
      events: (await driver.index.query(`SELECT count(*)::int AS n FROM contract_events`)).rows[0].n,
      outbox: (
        await driver.core.pool.query(
          `SELECT tx_hash, block_number, block_hash FROM chain_transactions WHERE status = 'CONFIRMED' ORDER BY tx_hash`,
        )
      ).rows,
    };
    await driver.close();
    await stopFixtureStack();
    await startFixtureStack();
    driver = await createDriver(current());

    const head = await driver.core.provider.getBlock(before.head!.number);
    expect(head!.hash).to.equal(before.head!.hash);
    const receipt = await driver.core.provider.getTransactionReceipt(last.hash);
    expect(receipt!.blockHash).to.equal(last.receipt.blockHash);
    const outbox = (
      await driver.core.pool.query(
        `SELECT tx_hash, block_number, block_hash FROM chain_transactions WHERE status = 'CONFIRMED' ORDER BY tx_hash`,
      )
    ).rows;
    expect(outbox).to.deep.equal(before.outbox);
    const events = await eventually("index caught up", async () => {
      const n = (await driver.index.query(`SELECT count(*)::int AS n FROM contract_events`)).rows[0].n;
      return n >= before.events ? n : undefined;
    });
    expect(events).to.equal(before.events);
    expect((await health()).status).to.equal(200);
    expect((await register(`AFTER_RESTART_${Date.now()}`)).receipt.status).to.equal(1);
  });
});
