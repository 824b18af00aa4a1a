/**
 * Passkey custody over HTTP on the real stack: a department's wallet moves to a DepartmentPasskeyAccount deployed
 * from the reviewed build, its reviewers' passkeys sign the account's key proof in the console, the wallet change
 * waits out the registry's delay and is activated; later the reviewers change who signs (a removed reviewer's key
 * leaves the account).
 */
import { expect } from "chai";
import { Contract, getAddress, keccak256 } from "ethers";
import { DepartmentPasskeyAccountAbi } from "../../abis/index.ts";
import { REVIEWED_PASSKEY_ACCOUNT_CODE_HASH } from "../../scripts/audit/passkeyAudit.ts";
import { clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { apiClient, expectError } from "./support/httpClient.ts";
import { eventually } from "./support/eventually.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import {
  assertionFor,
  digestOfTypedData,
  registeredReviewer,
  relyingPartyOf,
  sign,
  type Reviewer,
} from "./support/passkeyReviewers.ts";
import { current } from "./support/stackFixture.ts";
import { letters } from "./support/sessions.ts";

describe("passkey custody: a department's wallet moved to its reviewers' passkeys (HTTP, real stack)", function () {
  const run = letters(`${Date.now() % 1e7}`);
  let api: string;
  let driver: Driver;
  let admin: ReturnType<typeof apiClient>;
  let dept: CreatedTestDepartment;
  let other: CreatedTestDepartment;
  let asDept: ReturnType<typeof departmentClient>;
  let rp: { origin: string; rpId: string };
  let ana: Reviewer;
  let ben: Reviewer;
  let cy: Reviewer;
  let account: string;

  before(async function () {
    const stack = current();
    api = stack.api.url;
    driver = await createDriver(stack);
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = apiClient(api, adminToken);
    [dept, other] = await Promise.all([
      createDepartment(api, adminToken, { code: `PKC_${run}`, name: "Passkey custody board" }),
      createDepartment(api, adminToken, { code: `PKO_${run}`, name: "Other board" }),
    ]);
    asDept = departmentClient(api, dept);
    rp = await relyingPartyOf(api, dept);
    ana = await registeredReviewer(api, dept, "Ana", rp);
    ben = await registeredReviewer(api, dept, "Ben", rp);
    cy = await registeredReviewer(api, dept, "Cy", rp);
  });
  after(async () => driver?.close());

  const accountContract = () => new Contract(account, DepartmentPasskeyAccountAbi as never, driver.core.provider);

  describe("POST /departments/{code}/passkey-custody", function () {
    it("refuses a threshold above the reviewers with a passkey (409), another department's key and a console session (403)", async function () {
      const tooMany = await asDept.post(`/departments/${dept.code}/passkey-custody`, { threshold: 4 });
      expectError(tooMany, 409, "NOT_ENOUGH_REVIEWERS");
      const byOther = await departmentClient(api, other).post(`/departments/${dept.code}/passkey-custody`, {
        threshold: 2,
      });
      expect(byOther.status).to.equal(403);
      expectError(await ana.browser.post(`/departments/${dept.code}/passkey-custody`, { threshold: 2 }), 403);
      const { rows } = await driver.core.pool.query(`SELECT 1 FROM passkey_accounts WHERE department_code = $1`, [
        dept.code,
      ]);
      expect(rows, "nothing deployed").to.have.length(0);
    });

    it("deploys the reviewed account with every reviewer's passkey, recorded before it was sent, and opens the key proof", async function () {
      const started = await asDept.post(`/departments/${dept.code}/passkey-custody`, { threshold: 2 });
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      account = started.body.account.address;
      expect(started.body.account.threshold).to.equal(2);
      expect(started.body.account.reviewers).to.have.members([ana, ben, cy].map((r) => r.passkey.publicKey));

      const code = await driver.core.provider.getCode(account);
      expect(keccak256(code), "the reviewed DepartmentPasskeyAccount").to.equal(REVIEWED_PASSKEY_ACCOUNT_CODE_HASH);
      const onChain = accountContract();
      expect(Number(await onChain.threshold())).to.equal(2);
      expect([...(await onChain.reviewers())].map((k: string) => k.toLowerCase())).to.have.members(
        [ana, ben, cy].map((r) => r.passkey.publicKey),
      );

      const { rows } = await driver.core.pool.query(
        `SELECT t.kind, t.status, t.to_address, t.from_address, a.threshold FROM passkey_accounts a
         JOIN chain_transactions t ON t.id = a.chain_tx_id WHERE a.address = $1`,
        [account.toLowerCase()],
      );
      expect(rows[0]).to.include({
        kind: "DEPLOY_PASSKEY_ACCOUNT",
        status: "CONFIRMED",
        to_address: account.toLowerCase(),
        threshold: 2,
      });

      const proof = started.body.signingRequest;
      expect(proof).to.include({ kind: "KEY_PROOF", status: "COLLECTING", threshold: 2 });
      expect(proof.summary).to.deep.include({ departmentCode: dept.code, wallet: account, custody: "DEPARTMENT_HELD" });
      expect(proof.challenge).to.equal(Buffer.from(proof.digest.slice(2), "hex").toString("base64url"));
      expect(digestOfTypedData(proof.typedData)).to.equal(proof.digest);
      // Whoever deployed the account chose its reviewers: the proof shows them, named, before anyone consents.
      expect(
        proof.summary.reviewers.map((r: { reviewerName: string; publicKey: string }) => [r.reviewerName, r.publicKey]),
      ).to.have.deep.members([ana, ben, cy].map((r) => [r.name, r.passkey.publicKey]));
      expect(proof.typedData.message).to.deep.include({ wallet: account });

      const again = await asDept.post(`/departments/${dept.code}/passkey-custody`, { threshold: 2 });
      expectError(again, 409, "CUSTODY_MOVE_IN_PROGRESS");
    });

    it("moves the wallet once two reviewers signed the key proof, effective after the registry's delay", async function () {
      const listed = await ana.browser.get("/console/signing-requests?status=COLLECTING");
      expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
      const proof = listed.body.signingRequests.find((s: { kind: string }) => s.kind === "KEY_PROOF");
      expect(proof.allowCredentials).to.deep.equal([ana.passkey.id]);

      const first = await sign(ana, proof, rp);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.status).to.equal("COLLECTING");
      expect(first.body.signatures.map((s: { reviewerName: string }) => s.reviewerName)).to.deep.equal(["Ana"]);
      expect(first.body.allowCredentials, "Ana has signed").to.deep.equal([]);
      const before = await admin.get(`/departments/${dept.code}`);
      expect(before.body.pendingWalletChange, "one signature proposes nothing").to.equal(null);

      const second = await sign(ben, proof, rp);
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.body.status).to.equal("SUBMITTED");
      expect(second.body.transactionHash).to.match(/^0x[0-9a-f]{64}$/);

      const proposed = await admin.get(`/departments/${dept.code}`);
      expect(proposed.body.pendingWalletChange).to.include({ walletAddress: account, custody: "DEPARTMENT_HELD" });
      expectError(await admin.post(`/departments/${dept.code}/wallet-change/activate`), 409, "WALLET_CHANGE_NOT_DUE");

      const effectiveAt = Date.parse(proposed.body.pendingWalletChange.effectiveAt);
      await new Promise((r) => setTimeout(r, Math.max(0, effectiveAt - Date.now()) + 1500));
      const activated = await admin.post(`/departments/${dept.code}/wallet-change/activate`);
      expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
      expect(activated.body).to.include({ walletAddress: account, custody: "DEPARTMENT_HELD" });

      const late = await cy.browser.get(`/console/signing-requests/${proof.id}`);
      expect(late.body).to.include({ status: "SUBMITTED" });
      expect(late.body.allowCredentials, "nothing left to sign").to.deep.equal([]);
    });
  });

  describe("POST /departments/{code}/passkey-account/reviewer-changes", function () {
    it("takes a removed reviewer's key off the account once the others signed; the removed passkey cannot sign", async function () {
      const removed = await asDept.delete(`/departments/${dept.code}/reviewers/${cy.reviewerId}`);
      expect(removed.status, JSON.stringify(removed.body)).to.equal(204);

      const bySession = await ana.browser.post(`/departments/${dept.code}/passkey-account/reviewer-changes`, {
        remove: [cy.passkey.id],
      });
      expect(bySession.status).to.equal(403);
      const unknown = await asDept.post(`/departments/${dept.code}/passkey-account/reviewer-changes`, {
        remove: [`0x${"11".repeat(64)}`],
      });
      expectError(unknown, 409, "REVIEWER_UNKNOWN");

      const opened = await asDept.post(`/departments/${dept.code}/passkey-account/reviewer-changes`, {
        remove: [cy.passkey.id],
      });
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      expect(opened.body).to.include({ kind: "REVIEWER_CHANGE", status: "COLLECTING", threshold: 2 });
      expect(opened.body.summary).to.deep.include({ add: [], remove: [cy.passkey.publicKey], threshold: 2 });
      // The typed data hashes to the account's own changeDigest.
      expect(digestOfTypedData(opened.body.typedData)).to.equal(opened.body.digest);
      expect(opened.body.typedData.domain.verifyingContract).to.equal(account);

      // Cy's session ended with the removal: a removed reviewer signs nothing.
      const byCy = await cy.browser.post(`/console/signing-requests/${opened.body.id}/assertions`, {
        response: {},
      });
      expect(byCy.status).to.equal(401);

      expect((await sign(ana, opened.body, rp)).body.status).to.equal("COLLECTING");
      const done = await sign(ben, opened.body, rp);
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
      expect(done.body.status).to.equal("SUBMITTED");
      const keys = [...(await accountContract().reviewers())].map((k: string) => k.toLowerCase());
      expect(keys).to.have.members([ana.passkey.publicKey, ben.passkey.publicKey]);
      const tx = await driver.core.provider.getTransaction(done.body.transactionHash);
      expect(getAddress(tx!.to!)).to.equal(account);
      await eventually("the change audited", async () => {
        const { rows } = await driver.core.pool.query(
          `SELECT action FROM audit_logs WHERE entity_type = 'DEPARTMENT' AND entity_id = $1 ORDER BY created_at`,
          [dept.code],
        );
        const actions = rows.map((r) => r.action);
        return actions.includes("CHANGE_PASSKEY_REVIEWERS") ? actions : undefined;
      });
    });
    it("adds a new reviewer's passkey, and two last signatures arriving together relay once", async function () {
      const dee = await registeredReviewer(api, dept, "Dee", rp);
      const opened = await asDept.post(`/departments/${dept.code}/passkey-account/reviewer-changes`, {
        add: [dee.passkey.id],
      });
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      expect(opened.body.summary).to.deep.include({ add: [dee.passkey.publicKey], remove: [], threshold: 2 });
      expect(
        (await dee.browser.get(`/console/signing-requests/${opened.body.id}`)).body.allowCredentials,
      ).to.deep.equal([]);
      await sign(ana, opened.body, rp);
      expect((await sign(ben, opened.body, rp)).body.status).to.equal("SUBMITTED");
      expect([...(await accountContract().reviewers())].map((k: string) => k.toLowerCase())).to.include(
        dee.passkey.publicKey,
      );

      const raise = await asDept.post(`/departments/${dept.code}/passkey-account/reviewer-changes`, { threshold: 3 });
      expect(raise.status, JSON.stringify(raise.body)).to.equal(201);
      await sign(ana, raise.body, rp);
      const [seenByBen, seenByDee] = await Promise.all(
        [ben, dee].map(async (r) => (await r.browser.get(`/console/signing-requests/${raise.body.id}`)).body),
      );
      const [byBen, byDee] = await Promise.all([
        ben.browser.post(`/console/signing-requests/${raise.body.id}/assertions`, {
          response: assertionFor(ben, seenByBen, rp),
        }),
        dee.browser.post(`/console/signing-requests/${raise.body.id}/assertions`, {
          response: assertionFor(dee, seenByDee, rp),
        }),
      ]);
      expect([byBen.status, byDee.status].sort()).to.deep.equal([200, 409]);
      const closed = byBen.status === 409 ? byBen : byDee;
      expect(closed.body.code).to.equal("SIGNING_REQUEST_CLOSED");
      expect(Number(await accountContract().threshold())).to.equal(3);
      const { rows } = await driver.core.pool.query(
        `SELECT count(*)::int AS n FROM chain_transactions WHERE kind = 'PASSKEY_REVIEWER_CHANGE' AND to_address = $1`,
        [account.toLowerCase()],
      );
      expect(rows[0].n, "three changes, each relayed once").to.equal(3);
    });

    it("refuses signatures once a signing request expired (409 SIGNING_REQUEST_CLOSED), and reads it EXPIRED", async function () {
      const opened = await asDept.post(`/departments/${dept.code}/passkey-account/reviewer-changes`, { threshold: 2 });
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      const seen = (await ana.browser.get(`/console/signing-requests/${opened.body.id}`)).body;
      await driver.core.pool.query(
        `UPDATE signing_requests SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [opened.body.id],
      );
      const late = await ana.browser.post(`/console/signing-requests/${opened.body.id}/assertions`, {
        response: assertionFor(ana, seen, rp),
      });
      expectError(late, 409, "SIGNING_REQUEST_CLOSED");
      expect((await ana.browser.get(`/console/signing-requests/${opened.body.id}`)).body.status).to.equal("EXPIRED");
      const open = await ana.browser.get("/console/signing-requests?status=COLLECTING");
      expect(open.body.signingRequests.map((r: { id: string }) => r.id)).to.not.include(opened.body.id);
    });
  });
});
