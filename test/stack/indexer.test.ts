import { expect } from "chai";
import type { ConfirmedTx } from "../../api/src/chain/chainGateway.ts";
import { Wallet, ZeroHash } from "ethers";
import { current } from "./support/stackFixture.ts";
import {
  b32,
  createDriver,
  documents,
  registry,
  sha,
  token,
  uuidBytes,
  type Driver,
} from "./support/platformDriver.ts";

/** A scripted lifecycle through the real write path, then the index views compared with what was sent. */
describe("indexer", function () {
  let driver: Driver;
  before(async () => (driver = await createDriver(current())));
  after(async () => driver.close());

  it("mirrors a scripted on-chain scenario exactly", async function () {
    const { send, operator } = driver;
    const run = `${Date.now() % 1e6}`;
    const codes = ["A", "B", "C", "D"].map((c) => `IDX_${c}_${run}`);
    const wallets: string[] = [];
    for (const code of codes) wallets.push(await driver.department(code));
    const type = `PERMIT_${run}`;
    const workflowTx = await driver.workflow(type, codes.slice(0, 2), codes.slice(2));
    const workflowId = Number(
      registry.parseLog(
        workflowTx.receipt.logs.find((l) => l.topics[0] === registry.getEvent("WorkflowRegistered")!.topicHash)!,
      )!.args.workflowId,
    );
    const applicant = Wallet.createRandom().address;
    const tokenId = BigInt(500_000 + Math.floor(Math.random() * 400_000));
    const sent: ConfirmedTx[] = [];
    const q = async (sql: string, params: unknown[] = []) => (await driver.index.query(sql, params)).rows;
    // Who can decide now, as the index holds it (the contract's pendingDepartmentsOf at the latest review event).
    const pending = async (token: bigint) =>
      (
        await q(
          `SELECT d.code FROM pending_departments p JOIN departments d USING (department_id) WHERE p.token_id = $1 ORDER BY d.code`,
          [token.toString()],
        )
      ).map((r) => r.code);
    sent.push(
      await send(
        "MINT_NFT",
        operator,
        "LicenceToken",
        token.encodeFunctionData("mint", [applicant, tokenId, b32(type), ZeroHash]),
      ),
    );
    sent.push(
      await send(
        "DOC_UPDATE",
        operator,
        "DocumentRegistry",
        documents.encodeFunctionData("anchorDocument", [tokenId, uuidBytes(1), b32("SITE_PLAN"), sha(`${run}-plan-1`)]),
      ),
    );
    sent.push(
      await send(
        "DOC_UPDATE",
        operator,
        "DocumentRegistry",
        documents.encodeFunctionData("anchorDocument", [tokenId, uuidBytes(2), b32("DEED"), sha(`${run}-deed-1`)]),
      ),
    );
    sent.push(await send("SUBMIT", operator, "ApprovalRegistry", registry.encodeFunctionData("submit", [tokenId])));
    // Read-your-writes: every send returns after the index reached its block, so the rows are there now.
    expect(await pending(tokenId)).to.deep.equal([codes[0]]); // SEQUENTIAL [A, B]: A's turn
    const approve = async (i: number, mask: number) =>
      driver.decide(codes[i], wallets[i], tokenId, { mask, remarks: `remarks-${i}` });
    sent.push(await approve(0, 0b11));
    expect(await pending(tokenId)).to.deep.equal([codes[1]]);
    // A new version of the plan invalidates A's approval: A must approve again, and it is A's turn again.
    sent.push(
      await send(
        "DOC_UPDATE",
        operator,
        "DocumentRegistry",
        documents.encodeFunctionData("anchorVersion", [tokenId, sha(`${run}-plan-1`), sha(`${run}-plan-2`)]),
      ),
    );
    expect(await pending(tokenId)).to.deep.equal([codes[0]]);
    sent.push(await approve(0, 0b11));
    sent.push(await approve(1, 0b01));
    expect(await pending(tokenId)).to.deep.equal([codes[2], codes[3]]); // PARALLEL [C, D]
    sent.push(await approve(2, 0b10));
    expect(await pending(tokenId)).to.deep.equal([codes[3]]);
    sent.push(await approve(3, 0b11));
    expect(await pending(tokenId)).to.deep.equal([]);
    sent.push(await send("REVOKE", driver.admin, "LicenceToken", token.encodeFunctionData("revoke", [tokenId, 9])));

    const [licence] = await q(
      `SELECT owner, workflow_id, status, reason_code, expires_at, issued_at, created_tx FROM licences WHERE token_id = $1`,
      [tokenId.toString()],
    );
    const record = await driver.licence(tokenId);
    expect(licence).to.deep.equal({
      owner: applicant.toLowerCase(),
      workflow_id: workflowId,
      status: "REVOKED",
      reason_code: 9,
      expires_at: record.expiresAt.toString(),
      issued_at: licence.issued_at,
      created_tx: sent[0].hash,
    });
    expect(Number(licence.issued_at)).to.equal(Number(record.expiresAt) - 86_400 * 365);

    const history = await q(
      `SELECT from_status, to_status FROM licence_status_history WHERE token_id = $1 ORDER BY block_number, log_index`,
      [tokenId.toString()],
    );
    expect(history.map((h) => `${h.from_status}>${h.to_status}`)).to.deep.equal([
      "DRAFT>SUBMITTED",
      "SUBMITTED>APPROVED",
      "APPROVED>REVOKED",
    ]);

    const versions = await q(
      `SELECT sha256_hash, doc_index, version FROM document_versions WHERE token_id = $1 ORDER BY doc_index, version`,
      [tokenId.toString()],
    );
    expect(versions).to.deep.equal([
      { sha256_hash: sha(`${run}-plan-1`), doc_index: 0, version: 1 },
      { sha256_hash: sha(`${run}-plan-2`), doc_index: 0, version: 2 },
      { sha256_hash: sha(`${run}-deed-1`), doc_index: 1, version: 1 },
    ]);
    const docs = await q(
      `SELECT doc_index, doc_type, latest_version, latest_hash FROM documents WHERE token_id = $1 ORDER BY doc_index`,
      [tokenId.toString()],
    );
    expect(docs).to.deep.equal([
      { doc_index: 0, doc_type: "SITE_PLAN", latest_version: 2, latest_hash: sha(`${run}-plan-2`) },
      { doc_index: 1, doc_type: "DEED", latest_version: 1, latest_hash: sha(`${run}-deed-1`) },
    ]);

    const approvals = await q(
      `SELECT d.code, a.stage, a.decision, a.status, a.is_active, a.invalidation_reason, a.tx_hash FROM approvals a JOIN departments d USING (department_id)
       WHERE a.token_id = $1 ORDER BY a.block_number, a.log_index`,
      [tokenId.toString()],
    );
    expect(approvals).to.deep.equal([
      {
        code: codes[0],
        stage: 0,
        decision: "APPROVED",
        status: "REVIEW_REQUIRED",
        is_active: false,
        invalidation_reason: approvals[0].invalidation_reason,
        tx_hash: sent[4].hash,
      },
      {
        code: codes[0],
        stage: 0,
        decision: "APPROVED",
        status: "APPROVED",
        is_active: true,
        invalidation_reason: null,
        tx_hash: sent[6].hash,
      },
      {
        code: codes[1],
        stage: 0,
        decision: "APPROVED",
        status: "APPROVED",
        is_active: true,
        invalidation_reason: null,
        tx_hash: sent[7].hash,
      },
      {
        code: codes[2],
        stage: 1,
        decision: "APPROVED",
        status: "APPROVED",
        is_active: true,
        invalidation_reason: null,
        tx_hash: sent[8].hash,
      },
      {
        code: codes[3],
        stage: 1,
        decision: "APPROVED",
        status: "APPROVED",
        is_active: true,
        invalidation_reason: null,
        tx_hash: sent[9].hash,
      },
    ]);
    expect(approvals[0].invalidation_reason).to.match(/DOCUMENT_UPDATED/);

    const [progress] = await q(`SELECT workflow_id, stage, phase FROM request_progress WHERE token_id = $1`, [
      tokenId.toString(),
    ]);
    expect(progress).to.deep.equal({ workflow_id: workflowId, stage: 1, phase: "CLOSED" });

    const txs = await q(`SELECT hash, kind, gas_used, block_number FROM transactions WHERE hash = ANY($1)`, [
      sent.map((s) => s.hash),
    ]);
    expect(txs).to.have.length(sent.length);
    for (const tx of sent) {
      const row = txs.find((t) => t.hash === tx.hash)!;
      expect(row.gas_used, tx.hash).to.equal(tx.gasUsed.toString());
      expect(Number(row.block_number)).to.equal(tx.blockNumber);
    }
    expect(sent.map((s) => txs.find((t) => t.hash === s.hash)!.kind)).to.deep.equal([
      "MINT_NFT",
      "DOC_UPDATE",
      "DOC_UPDATE",
      "SUBMIT",
      "APPROVAL",
      "DOC_UPDATE",
      "APPROVAL",
      "APPROVAL",
      "APPROVAL",
      "APPROVAL",
      "REVOKE",
    ]);

    // And the outbox agrees with the chain and the index: same hashes, all confirmed at the same blocks.
    const outbox = await driver.core.pool.query(
      `SELECT tx_hash, status, block_number FROM chain_transactions WHERE tx_hash = ANY($1)`,
      [sent.map((s) => s.hash)],
    );
    expect(outbox.rows.every((r) => r.status === "CONFIRMED")).to.equal(true);
    for (const row of outbox.rows)
      expect(Number(row.block_number)).to.equal(Number(txs.find((t) => t.hash === row.tx_hash)!.block_number));

    // The same file in another request: a row of its own (a hash is anchored once per request, not once overall).
    const other = tokenId + 1n;
    await send(
      "MINT_NFT",
      operator,
      "LicenceToken",
      token.encodeFunctionData("mint", [applicant, other, b32(type), ZeroHash]),
    );
    await send(
      "DOC_UPDATE",
      operator,
      "DocumentRegistry",
      documents.encodeFunctionData("anchorDocument", [other, uuidBytes(3), b32("SITE_PLAN"), sha(`${run}-plan-1`)]),
    );
    expect(
      await q(`SELECT token_id, doc_index, version FROM document_versions WHERE sha256_hash = $1 ORDER BY token_id`, [
        sha(`${run}-plan-1`),
      ]),
    ).to.deep.equal([
      { token_id: tokenId.toString(), doc_index: 0, version: 1 },
      { token_id: other.toString(), doc_index: 0, version: 1 },
    ]);
  });

  it("writes the review phase and the decisions a resubmission clears from the contract's events", async function () {
    const { send, operator } = driver;
    const run = `${Date.now() % 1e6}`;
    const codes = ["A", "B", "C"].map((c) => `IDR_${c}_${run}`);
    const wallets: string[] = [];
    for (const code of codes) wallets.push(await driver.department(code));
    const type = `RESUB_${run}`;
    await driver.workflow(type, codes.slice(0, 2), codes.slice(2));
    const tokenId = BigInt(100_000 + Math.floor(Math.random() * 400_000));
    const q = async (sql: string, params: unknown[] = []) => (await driver.index.query(sql, params)).rows;
    const phase = async () =>
      (await q(`SELECT phase FROM request_progress WHERE token_id = $1`, [tokenId.toString()]))[0]?.phase;
    const pending = async () =>
      (
        await q(
          `SELECT d.code FROM pending_departments p JOIN departments d USING (department_id) WHERE p.token_id = $1 ORDER BY d.code`,
          [tokenId.toString()],
        )
      ).map((r) => r.code);
    const decide = async (i: number, fn: "approve" | "requestChanges") =>
      driver.decide(codes[i], wallets[i], tokenId, {
        mask: 0,
        remarks: `r-${run}-${i}`,
        decision: fn === "approve" ? 1 : 3,
      });

    await send(
      "MINT_NFT",
      operator,
      "LicenceToken",
      token.encodeFunctionData("mint", [Wallet.createRandom().address, tokenId, b32(type), ZeroHash]),
    );
    await send(
      "DOC_UPDATE",
      operator,
      "DocumentRegistry",
      documents.encodeFunctionData("anchorDocument", [
        tokenId,
        uuidBytes(7),
        b32("SITE_PLAN"),
        sha(`${run}-resub-plan`),
      ]),
    );
    await send("SUBMIT", operator, "ApprovalRegistry", registry.encodeFunctionData("submit", [tokenId]));
    expect(await phase()).to.equal("IN_REVIEW");
    const approved = await decide(0, "approve");
    const asked = await decide(1, "requestChanges");
    expect(await phase()).to.equal("AWAITING_RESUBMISSION");
    expect(await pending()).to.deep.equal([]);

    const resubmitted = await send(
      "RESUBMIT",
      operator,
      "ApprovalRegistry",
      registry.encodeFunctionData("resubmit", [tokenId]),
    );
    expect(await phase()).to.equal("IN_REVIEW");
    expect(await pending()).to.deep.equal([codes[1]]);
    // DecisionsReset(Resubmitted) closed B's request for changes; A's approval stands.
    const rows = await q(
      `SELECT d.code, a.status, a.is_active, a.invalidation_reason, a.invalidation_tx, a.tx_hash FROM approvals a JOIN departments d USING (department_id)
       WHERE a.token_id = $1 ORDER BY a.block_number, a.log_index`,
      [tokenId.toString()],
    );
    expect(rows).to.deep.equal([
      {
        code: codes[0],
        status: "APPROVED",
        is_active: true,
        invalidation_reason: null,
        invalidation_tx: null,
        tx_hash: approved.hash,
      },
      {
        code: codes[1],
        status: "CHANGES_REQUESTED",
        is_active: false,
        invalidation_reason: "RESUBMITTED",
        invalidation_tx: resubmitted.hash,
        tx_hash: asked.hash,
      },
    ]);

    // Cancelling while awaiting resubmission closes the review (ReviewPhaseChanged, not the token's status).
    await decide(1, "requestChanges");
    await send("CANCEL", operator, "ApprovalRegistry", registry.encodeFunctionData("cancel", [tokenId, 2]));
    expect(await phase()).to.equal("CLOSED");
    expect(await pending()).to.deep.equal([]);
    const phases = await q(
      `SELECT args->>'phase' AS phase FROM contract_events WHERE event_name = 'ReviewPhaseChanged' AND args->>'tokenId' = $1 ORDER BY block_number, log_index`,
      [tokenId.toString()],
    );
    expect(phases.map((p) => Number(p.phase))).to.deep.equal([1, 2, 1, 2, 4]); // InReview, Awaiting, InReview, Awaiting, Closed
  });
});
