/**
 * Fault injection on the real stack: an API process killed (SIGKILL) in the middle of 200 concurrent writes, the
 * chain's RPC stopped, Postgres restarted under load. After each: nothing a client was told succeeded is lost or
 * doubled, nothing is left half-written, and the API recovers without being restarted.
 */
import { expect } from "chai";
import { applicantToken } from "./support/authClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

interface Outcome {
  startedAt: number;
  status: number;
  requestId?: string;
  transactionHash?: string;
  code?: string;
  error?: string;
  ms: number;
}

async function createRequest(apiUrl: string, token: string, applicantId: string, key?: string): Promise<Outcome> {
  const started = Date.now();
  try {
    const response = await fetch(`${apiUrl}/api/v1/requests`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(key ? { "idempotency-key": key } : {}),
      },
      body: JSON.stringify({ applicantId, requestType: "BUILDING_PERMIT" }),
    });
    const body = (await response.json().catch(() => ({}))) as {
      requestId?: string;
      transactionHash?: string;
      code?: string;
    };
    return {
      startedAt: started,
      status: response.status,
      requestId: body.requestId,
      transactionHash: body.transactionHash,
      code: body.code,
      ms: Date.now() - started,
    };
  } catch (error) {
    return { startedAt: started, status: 0, error: (error as Error).message, ms: Date.now() - started };
  }
}

describe("fault injection (kill, chain down, Postgres restart)", function () {
  const run = `${Date.now() % 1e7}`;
  const tag = letters(run);
  let driver: Driver;
  let token: string;
  const applicantId = `faults-${run}`;
  const query = (sql: string, params: unknown[] = []) => driver.core.pool.query(sql, params);

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        "Building permit (faults)",
        stage("s", "Review", "SEQUENTIAL", { [`FAULTS_${tag}`]: [] }),
      ),
    );
    token = await applicantToken(stack.api.url, { id: applicantId, name: "Fay Faults" });
  });
  after(async () => driver?.close());

  /** Every outbox record of these requests settled (none PENDING), then the rows as the outbox has them. */
  const settled = (ids: string[]) =>
    eventually(
      "the outbox to settle",
      async () => {
        const { rows } = await query(
          `SELECT request_id, kind, status FROM chain_transactions WHERE request_id = ANY($1)`,
          [ids],
        );
        return rows.some((r) => r.status === "PENDING") ? undefined : rows;
      },
      90_000,
    );

  it("SIGKILL in the middle of 200 concurrent writes: every 2xx is on chain and in the index exactly once, PENDING is reconciled, no nonce gap", async function () {
    const stack = current();
    const target = await stack.startExtraApi();
    let answered = 0;
    let killed: Promise<void> | undefined;
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const outcome = await createRequest(target.url, token, applicantId, `kill-${run}-${i}`);
        // Killed once a fifth of the writes have answered: the rest are in every possible stage.
        if (++answered === 40) killed = target.process.kill();
        return outcome;
      }),
    );
    await killed;
    const ok = outcomes.filter((o) => o.status === 201);
    const cut = outcomes.filter((o) => o.status === 0);
    expect(ok.length, "some writes answered before the kill").to.be.at.least(40);
    expect(cut.length, "some writes were cut by the kill").to.be.greaterThan(0);
    expect(
      outcomes.every((o) => o.status === 201 || o.status === 0),
      JSON.stringify(outcomes.filter((o) => o.status !== 201 && o.status !== 0)),
    ).to.equal(true);

    // Restarted on the same port; it (and the main API) reconcile what the killed one left.
    const restarted = await stack.startExtraApi(target.port);
    try {
      const mine = (await query(`SELECT id FROM requests WHERE applicant_id = $1`, [applicantId])).rows.map(
        (r) => r.id as string,
      );
      const outbox = await settled(mine);
      // Exactly once: one mint per request, and every 2xx answer is among the confirmed ones, in the index.
      const mints = new Map<string, string[]>();
      for (const row of outbox.filter((r) => r.kind === "MINT_NFT"))
        mints.set(row.request_id, [...(mints.get(row.request_id) ?? []), row.status]);
      expect([...mints.values()].every((statuses) => statuses.length === 1)).to.equal(true);
      for (const outcome of ok) {
        expect(mints.get(outcome.requestId!), outcome.requestId).to.deep.equal(["CONFIRMED"]);
        const receipt = await driver.core.provider.getTransactionReceipt(outcome.transactionHash!);
        expect(receipt?.status).to.equal(1);
      }
      await eventually(
        "every confirmed request in the index",
        async () => {
          const { rows } = await query(
            `SELECT count(*)::int AS n FROM requests r JOIN chain_transactions t ON t.id = r.chain_tx_id JOIN index.licences l ON l.token_id = r.token_id WHERE r.applicant_id = $1 AND t.status = 'CONFIRMED'`,
            [applicantId],
          );
          const confirmed = [...mints.values()].filter((s) => s[0] === "CONFIRMED").length;
          return rows[0].n === confirmed ? true : undefined;
        },
        60_000,
      );
      // No nonce gap: the operator's next write goes through at once, and the outbox agrees with the chain.
      const next = await createRequest(restarted.url, token, applicantId);
      expect(next.status).to.equal(201);
      expect(next.ms).to.be.below(10_000);
      const wallet = (
        await query(`SELECT next_nonce FROM wallets WHERE address = $1`, [stack.operatorAddress.toLowerCase()])
      ).rows[0];
      expect(BigInt(wallet.next_nonce)).to.equal(
        BigInt(await driver.core.provider.getTransactionCount(stack.operatorAddress, "pending")),
      );
    } finally {
      await restarted.stop();
    }
  });

  it("chain RPC stopped: writes answer 503 CHAIN_UNAVAILABLE at once with nothing written; the API recovers without a restart", async function () {
    const stack = current();
    const counts = async () =>
      (
        await query(
          `SELECT (SELECT count(*) FROM requests)::int AS requests, (SELECT count(*) FROM chain_transactions)::int AS txs, (SELECT count(*) FROM audit_logs)::int AS audits`,
        )
      ).rows[0];
    await stack.stopChain("clean");
    try {
      const before = await counts();
      for (let i = 0; i < 3; i++) {
        const outcome = await createRequest(stack.api.url, token, applicantId);
        expect(outcome.status).to.equal(503);
        expect(outcome.code).to.equal("CHAIN_UNAVAILABLE");
        expect(outcome.ms, "promptly").to.be.below(3_000);
      }
      expect(await counts()).to.deep.equal(before);
    } finally {
      await stack.startChain();
    }
    const recovered = await eventually(
      "a write after the chain is back",
      async () => {
        const outcome = await createRequest(stack.api.url, token, applicantId);
        return outcome.status === 201 ? outcome : undefined;
      },
      60_000,
    );
    expect(recovered.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
  });

  it("Postgres restarted under load: requests in flight fail cleanly (503), nothing answered 2xx is lost, the API recovers without a restart", async function () {
    const stack = current();
    const outcomes: Outcome[] = [];
    let loading = true;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; loading; i++) {
        outcomes.push(await createRequest(stack.api.url, token, applicantId, `pg-${run}-${w}-${i}`));
        if (outcomes.at(-1)!.status !== 201) await new Promise((r) => setTimeout(r, 200));
      }
    });
    await new Promise((r) => setTimeout(r, 1_500));
    const restartStarted = Date.now();
    await stack.restartPostgres();
    const restartEnded = Date.now();
    await eventually(
      "writes succeeding again",
      async () => (outcomes.slice(-4).every((o) => o.status === 201) && outcomes.length > 8 ? true : undefined),
      60_000,
    ).catch((error) => {
      throw new Error(`${error.message}; last answers: ${JSON.stringify(outcomes.slice(-6))}`);
    });
    loading = false;
    await Promise.all(writers);

    const failures = outcomes.filter((o) => o.status !== 201);
    // Writes were in flight while Postgres went down (they waited for a connection, or failed).
    expect(
      outcomes.filter((o) => o.startedAt < restartEnded && o.startedAt + o.ms > restartStarted).length,
      "writes in flight during the restart",
    ).to.be.greaterThan(0);
    // Clean failures only: 503 with the error shape (never a 500, never a dropped connection).
    expect(
      failures.every((o) => o.status === 503 && ["SERVICE_UNAVAILABLE", "CHAIN_UNAVAILABLE"].includes(o.code!)),
      JSON.stringify(failures.filter((o) => o.status !== 503)),
    ).to.equal(true);
    // Nothing answered 2xx is lost: each is on chain and readable through the API.
    const reader = http(stack.api.url, token);
    for (const outcome of outcomes.filter((o) => o.status === 201)) {
      expect(
        (await driver.core.provider.getTransactionReceipt(outcome.transactionHash!))?.status,
        outcome.requestId,
      ).to.equal(1);
      await eventually(
        `request ${outcome.requestId} readable`,
        async () => ((await reader.get(`/requests/${outcome.requestId}`)).status === 200 ? true : undefined),
        120_000,
      );
    }
    await eventually(
      "health 200 again",
      async () => ((await fetch(`${stack.api.url}/health`)).status === 200 ? true : undefined),
      120_000,
    );
  });
});
