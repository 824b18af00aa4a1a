/**
 * Status lists anchored on chain, on the real stack: every change of a licence's status (through the admin API, or
 * on chain with a key the API does not use) is followed within a few blocks by an anchor of its list whose digests
 * are those of the lists built from the chain's own statuses; a tampered list does not match.
 */
import { expect } from "chai";
import { LicenceTokenAbi } from "../../abis/index.ts";
import { readContract } from "../../api/src/chain/contractReads.ts";
import {
  buildStatusLists,
  statusListDigest,
  statusPosition,
  type LicenceStatusEntry,
} from "../../api/src/domain/credentials/statusLists.ts";
import { eventually } from "./support/eventually.ts";
import { type Json } from "./support/httpClient.ts";
import { createDriver, token, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, applicantClient, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { draftRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

type Digests = readonly [string, string, string];

describe("status lists anchored on chain (real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const code = `ANCHOR_${letters(run)}`;
  let driver: Driver;
  let admin: Awaited<ReturnType<typeof adminSession>>["admin"];
  let applicant: Applicant;
  let department: Awaited<ReturnType<typeof departmentSession>>["client"];
  const chain = { call: (to: string, data: string) => driver.core.provider.call({ to, data }) };

  /** An issued licence: its request id and token id. */
  async function issued(label: string) {
    const { id, tokenId, docs } = await draftRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: [pdf(`${label} ${run}`), `${label}.pdf`],
    });
    expect((await applicant.post(`/requests/${id}/submit`)).status).to.equal(200);
    const approved = await department.post(`/requests/${id}/approve`, {
      remarks: "ok",
      reviewedDocuments: [docs.SITE_PLAN],
    });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    return { id, tokenId: BigInt(tokenId) };
  }

  /**
   * The status of every licence of `list` that was ever suspended or revoked, from the chain alone: the tokens named
   * by its LicenceStatusChanged logs, each asked of the contract (validityOf). No index, no API; a licence whose status
   * never changed has no bit set, and asking only these keeps the check cheap on a chain with thousands of licences.
   */
  async function chainEntries(list: number): Promise<LicenceStatusEntry[]> {
    const logs = await driver.core.provider.getLogs({
      address: driver.addresses.LicenceToken,
      topics: [token.getEvent("LicenceStatusChanged")!.topicHash],
      fromBlock: 0,
    });
    const ids = [...new Set(logs.map((log) => BigInt(log.topics[1])))];
    return Promise.all(
      ids
        .filter((id) => statusPosition(id).list === list)
        .map(async (tokenId) => {
          const [, status] = await readContract(chain, driver.addresses.LicenceToken, LicenceTokenAbi, "validityOf", [
            tokenId,
          ]);
          return { tokenId, status: ["SUSPENDED", "REVOKED"][status - 7] ?? "OTHER" };
        }),
    );
  }

  const digestsOf = (bits: ReturnType<typeof buildStatusLists>): Digests => [
    statusListDigest(bits.revocation),
    statusListDigest(bits.suspension),
    statusListDigest(bits.tokenStatus),
  ];

  async function anchorOf(list: number) {
    const anchor = await readContract(chain, driver.addresses.LicenceToken, LicenceTokenAbi, "statusListAnchorOf", [
      list,
    ]);
    return { ...anchor, digests: [anchor.revocation, anchor.suspension, anchor.tokenStatus] as Digests };
  }

  /**
   * Waits until the chain's anchor of `list` equals the digests of the lists built from the chain's statuses, and
   * returns it with how many blocks and milliseconds after `changedInBlock` it landed.
   */
  async function anchoredAfter(list: number, changedInBlock: number, since: number) {
    const anchor = await eventually(
      `list ${list} anchored with the chain's statuses`,
      async () => {
        const [anchor, expected] = await Promise.all([
          anchorOf(list),
          chainEntries(list).then((entries) => digestsOf(buildStatusLists(list, entries))),
        ]);
        return anchor.sequence > 0n && anchor.digests.every((d, i) => d === expected[i]) ? anchor : undefined;
      },
      30_000,
    );
    const blocks = Number(anchor.blockNumber) - changedInBlock;
    return { anchor, blocks, ms: Date.now() - since };
  }

  async function act(verb: "suspend" | "reinstate" | "revoke", requestId: string) {
    const since = Date.now();
    const response = await admin.post(`/requests/${requestId}/${verb}`, verb === "reinstate" ? {} : { reasonCode: 3 });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const receipt = await driver.core.provider.getTransactionReceipt((response.body as Json).transactionHash as string);
    return { block: receipt!.blockNumber, since };
  }

  let licence: { id: string; tokenId: bigint };
  let list: number;
  let unchanged: Digests;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    let api: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    department = (await departmentSession(api, adminToken, { code, name: "Anchoring Office" })).client;
    applicant = await applicantClient(api, { id: `anchor-${run}`, name: "Ann Anchored" });
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", "Anchoring permit", stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] })),
    );
    licence = await issued("first");
    await issued("second"); // stays valid beside it
    list = statusPosition(licence.tokenId).list;
  });
  after(async () => driver?.close());

  it("anchors a list once it holds an issued licence, and the index mirrors the anchor", async function () {
    const { anchor } = await anchoredAfter(list, 0, Date.now());
    unchanged = anchor.digests;
    const { rows } = await driver.core.pool.query(
      `SELECT sequence, revocation, suspension, token_status, block_number FROM index.status_list_anchors
       WHERE list = $1 ORDER BY sequence DESC LIMIT 1`,
      [list],
    );
    expect(rows[0]).to.deep.include({
      sequence: String(anchor.sequence),
      revocation: anchor.revocation,
      suspension: anchor.suspension,
      token_status: anchor.tokenStatus,
      block_number: String(anchor.blockNumber),
    });
  });

  it("suspend → within a few blocks the anchor is the digests of the lists built from the chain's statuses", async function () {
    const previous = await anchorOf(list);
    const { block, since } = await act("suspend", licence.id);
    const { anchor, blocks, ms } = await anchoredAfter(list, block, since);
    console.log(`      (suspension anchored ${blocks} block(s), ${ms} ms after the suspend request)`);
    expect(blocks).to.be.within(1, 3);
    expect(anchor.sequence).to.equal(previous.sequence + 1n);
    expect(anchor.digests[0], "revocation list unchanged").to.equal(unchanged[0]);
    expect(anchor.digests[1], "suspension list changed").to.not.equal(unchanged[1]);
    expect(anchor.digests[2], "token status list changed").to.not.equal(unchanged[2]);
  });

  it("reinstate → the anchor goes back to the digests before the suspension", async function () {
    const { block, since } = await act("reinstate", licence.id);
    const { anchor, blocks } = await anchoredAfter(list, block, since);
    expect(blocks).to.be.within(1, 3);
    expect(anchor.digests).to.deep.equal(unchanged);
  });

  it("revoke → changed again; a list with one bit flipped does not match the anchor", async function () {
    const { block, since } = await act("revoke", licence.id);
    const { anchor, blocks } = await anchoredAfter(list, block, since);
    expect(blocks).to.be.within(1, 3);
    expect(anchor.digests[0], "revocation list changed").to.not.equal(unchanged[0]);
    expect(anchor.digests[1], "suspension list as before").to.equal(unchanged[1]);

    const bits = buildStatusLists(list, await chainEntries(list));
    expect(digestsOf(bits)).to.deep.equal(anchor.digests);
    // The revoked licence's own bit cleared (it would read as valid), then any other bit of each list.
    const { index } = statusPosition(licence.tokenId);
    const revived = Uint8Array.from(bits.revocation);
    revived[index >> 3] ^= 0x80 >> (index % 8);
    expect(statusListDigest(revived)).to.not.equal(anchor.revocation);
    for (const [i, kind] of (["revocation", "suspension", "tokenStatus"] as const).entries()) {
      const tampered = Uint8Array.from(bits[kind]);
      tampered[tampered.length - 1] ^= 0x01;
      expect(statusListDigest(tampered), kind).to.not.equal(anchor.digests[i]);
    }
  });

  it("a change made on chain without the API's jobs running is anchored when they start again", async function () {
    const stack = current();
    const other = await issued("offline");
    await anchoredAfter(list, 0, Date.now()); // the issuance settled
    await stack.restartApi("clean", { JOBS_IN_API: "false" });
    let jobsRunning = false;
    try {
      const tx = await driver.send(
        "REVOKE",
        driver.admin,
        "LicenceToken",
        token.encodeFunctionData("suspend", [other.tokenId, 5]),
      );
      const stale = await anchorOf(list);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await anchorOf(list)).sequence, "nothing anchors while no job runner runs").to.equal(stale.sequence);
      await stack.restartApi("clean");
      jobsRunning = true;
      const { anchor } = await anchoredAfter(list, tx.blockNumber, Date.now());
      expect(anchor.sequence).to.equal(stale.sequence + 1n);
    } finally {
      if (!jobsRunning) await stack.restartApi("clean");
    }
  });
});
