/**
 * The auditor's tool checks the status lists' anchors against the chain's own licence statuses, on the real
 * contracts on a local chain (no database, no API): the anchors here are written by the test as the operator, with
 * digests from the API's list builder (api/src/domain/credentials/statusLists.ts), which the tool does not share.
 * Needs the contracts compiled (`npx hardhat build`).
 */
import { expect } from "chai";
import { Wallet, encodeBytes32String as b32, id } from "ethers";
import {
  buildStatusLists,
  statusListDigest,
  type LicenceStatusEntry,
} from "../../api/src/domain/credentials/statusLists.ts";
import { localPlatform, platformContracts, stage, type LocalPlatform } from "./localPlatform.ts";

const LIST_SIZE = 131_072;
const OTHER_LIST_TOKEN = LIST_SIZE + 5; // list 1

describe("auditor's tool: status list anchors against the chain's licence statuses", function () {
  this.timeout(180_000);
  let p: LocalPlatform;
  let c: Awaited<ReturnType<typeof platformContracts>>;
  const keys = { admin: Wallet.createRandom(), operator: Wallet.createRandom(), keeper: Wallet.createRandom() };
  const fire = Wallet.createRandom();
  let anchors = 0;

  async function issue(tokenId: number) {
    await c.submitted(tokenId);
    await c.mined(c.as(c.registry, fire).decide(await c.decision(tokenId, await c.departmentId("FIRE"))));
  }

  /** Anchors list 0 as the operator with the digests of `entries` (the API's builder), `tamper` flipping one bit. */
  async function anchor(entries: LicenceStatusEntry[], tamper = false) {
    const bits = buildStatusLists(0, entries);
    if (tamper) bits.suspension[0] ^= 0x40;
    anchors += 1;
    const digests = [bits.revocation, bits.suspension, bits.tokenStatus].map(statusListDigest);
    await c.mined(c.as(c.token, keys.operator).anchorStatusList(0, anchors, ...digests));
  }

  const listAudit = (report: any, list: number) => report.statusLists.find((l: any) => l.list === list);

  before(async function () {
    p = await localPlatform(31337, {
      OPERATOR_ADDRESS: keys.operator.address,
      ADMIN_ADDRESS: keys.admin.address,
      KEEPER_ADDRESS: keys.keeper.address,
    });
    c = await platformContracts(p, await p.provider.getSigner(p.deployment.deployer as string), keys.operator);
    for (const w of [keys.admin, fire]) await c.fund(w.address);
    const proof = await c.keyProof(fire, "FIRE", 0);
    await c.mined(c.registry.registerDepartment(b32("FIRE"), fire.address, 0, proof));
    await c.mined(c.registry.registerWorkflow(b32("PERMIT"), id("permit"), 86_400 * 365, [stage(["FIRE"])]));
    await issue(1);
    await issue(2);
  });

  after(async function () {
    await p?.close();
  });

  it("a list of valid licences without an anchor is a note, not a finding (exit 0)", async function () {
    const { code, report } = await p.audit("--all");
    expect(code, JSON.stringify(report.findings)).to.equal(0);
    expect(listAudit(report, 0)).to.deep.include({
      issued: 2,
      suspended: [],
      revoked: [],
      anchor: null,
      matches: false,
    });
    expect(report.notes.some((n: string) => n.startsWith("status list 0 holds 2 issued licence(s)"))).to.equal(true);
  });

  it("an anchor holding the digests of the chain's statuses matches (exit 0), also for one licence's audit", async function () {
    await anchor([]);
    const { code, report } = await p.audit("--all");
    expect(code, JSON.stringify(report.findings)).to.equal(0);
    const list = listAudit(report, 0);
    expect(list).to.deep.include({ matches: true });
    expect(list.anchor).to.include({ sequence: 1 });
    expect(list.digests.revocation).to.equal(list.anchor.revocation);
    const single = await p.audit("--token", "2");
    expect(single.report.statusLists.map((l: any) => [l.list, l.matches])).to.deep.equal([[0, true]]);
    expect(await p.auditText("--all")).to.match(
      /list 0 {2}2 issued, suspended \[\], revoked \[\] {2}anchor #1 block \d+ matches/,
    );
  });

  it("a suspension not anchored is a finding naming the list, the digest and the change; anchoring it clears it", async function () {
    await c.mined(c.as(c.token, keys.admin).suspend(1, 3));
    const stale = await p.audit("--all");
    expect(stale.code).to.equal(1);
    const [finding] = stale.report.findings.filter((f: string) => f.startsWith("status list 0"));
    expect(finding)
      .to.include("status list 0's anchor #1")
      .and.include("does not match its licences' statuses")
      .and.include("suspension anchored")
      .and.include("tokenStatus anchored")
      .and.include("last change of status was token 1 to SUSPENDED")
      .and.not.include("revocation anchored");

    await anchor([{ tokenId: 1n, status: "SUSPENDED" }]);
    const { code, report } = await p.audit("--all");
    expect(code, JSON.stringify(report.findings)).to.equal(0);
    expect(listAudit(report, 0)).to.deep.include({ suspended: [1], matches: true });
  });

  it("an anchor with one bit flipped is a finding", async function () {
    await anchor([{ tokenId: 1n, status: "SUSPENDED" }], true);
    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    expect(listAudit(report, 0).matches).to.equal(false);
    expect(report.findings.filter((f: string) => f.startsWith("status list 0's anchor #3"))).to.have.length(1);
  });

  it("a revoked licence in a list never anchored is a finding", async function () {
    await issue(OTHER_LIST_TOKEN);
    await c.mined(c.as(c.token, keys.admin).revoke(OTHER_LIST_TOKEN, 4));
    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    expect(listAudit(report, 1)).to.deep.include({ issued: 1, revoked: [OTHER_LIST_TOKEN], anchor: null });
    const never =
      /^status list 1 marks 0 suspended and 1 revoked licence\(s\) at block \d+ but was never anchored; its last change of status was token 131077 to REVOKED/;
    expect(
      report.findings.filter((f: string) => never.test(f)),
      JSON.stringify(report.findings),
    ).to.have.length(1);
  });
});
