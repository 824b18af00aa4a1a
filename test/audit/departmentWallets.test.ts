/**
 * The department wallet replay on synthetic histories: a rotation counts only if it activates the pending
 * proposal after the wallet delay (block time), and a wallet that took over early marks its whole period.
 */
import { expect } from "chai";
import { Wallet, id } from "ethers";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DEPARTMENT_KEY_TYPES } from "../../abis/index.ts";
import { approvalRegistryAbi } from "../../scripts/audit/contractViews.ts";
import { DepartmentWallets } from "../../scripts/audit/departmentWallets.ts";
import type { TimedEvent } from "../../scripts/audit/logReader.ts";
import {
  CONTRACTS,
  address,
  code,
  consented,
  event,
  proposed,
  registered,
  rotated,
  syntheticCalls,
} from "./syntheticChain.ts";

const DELAY = 60;
const [w1, w2, w3] = [address(), address(), address()];
const fire = () => registered(10, w1);
const cancelled = (block: number, wallet: string, by: string) =>
  event("DepartmentWalletCancelled", block, 0, { departmentId: 1n, wallet, by });
const replay = (events: TimedEvent[], roles?: ConstructorParameters<typeof DepartmentWallets>[2]) =>
  new DepartmentWallets(events, DELAY, roles);

describe("auditor: department wallet changes and their delays (synthetic events)", function () {
  it("accepts a rotation that activates its proposal after the delay, and reports how long it waited", function () {
    const wallets = replay([fire(), proposed(20, w2, 1_000_200), rotated(30, w1, w2, 1_000_200 + DELAY)]);
    expect(wallets.findings).to.deep.equal([]);
    expect(wallets.walletAt(1, { blockNumber: 25, logIndex: 0 })).to.equal(w1);
    expect(wallets.periodAt(1, { blockNumber: 31, logIndex: 0 })).to.deep.include({ wallet: w2, early: false });
    const rotation = wallets.audit()[0].changes.at(-1)!;
    expect(rotation).to.deep.include({
      kind: "ROTATED",
      previousWallet: w1,
      wallet: w2,
      waitedSeconds: DELAY,
      delayRespected: true,
    });
  });

  it("flags a rotation less than the delay after its proposal, and marks the new wallet's period early", function () {
    const wallets = replay([fire(), proposed(20, w2, 1_000_200), rotated(21, w1, w2, 1_000_200 + DELAY - 1)]);
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0])
      .to.include(`FIRE's wallet became ${w2}`)
      .and.include(`${DELAY - 1} s after its proposal`)
      .and.include(`the wallet delay is ${DELAY} s`);
    expect(wallets.periodAt(1, { blockNumber: 22, logIndex: 0 })!.early).to.equal(true);
  });

  it("flags a rotation with no pending proposal, or after its proposal was cancelled", function () {
    const none = replay([fire(), rotated(30, w1, w2)]);
    expect(none.findings).to.have.length(1);
    expect(none.findings[0]).to.include("with no pending proposal");

    const afterCancel = replay([fire(), proposed(20, w2), cancelled(21, w2, w1), rotated(40, w1, w2)]);
    expect(afterCancel.findings).to.have.length(1);
    expect(afterCancel.findings[0]).to.include("with no pending proposal");
    expect(afterCancel.periodAt(1, { blockNumber: 41, logIndex: 0 })!.early).to.equal(true);
  });

  it("measures the delay from the latest proposal: an earlier proposal that was replaced does not count", function () {
    // w2 proposed long ago, then w3 proposed just before the rotation to w3: only w3's proposal is pending.
    const wallets = replay([
      fire(),
      proposed(20, w2, 1_000_000),
      proposed(30, w3, 1_000_100),
      rotated(31, w1, w3, 1_000_000 + DELAY + 5),
    ]);
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0]).to.include(`${DELAY + 5 - 100} s after its proposal`);
    expect(wallets.audit()[0].changes[1])
      .to.deep.include({ kind: "PROPOSED", wallet: w2 })
      .and.have.property("replacedBy");
  });

  it("flags a rotation to another wallet or custody than the one proposed, and a wrong previous wallet", function () {
    const other = replay([fire(), proposed(20, w2, 1_000_000), rotated(30, w1, w3, 1_000_000 + DELAY)]);
    expect(other.findings).to.have.length(1);
    expect(other.findings[0]).to.include(`but the pending proposal was ${w2}`);

    const custody = replay([fire(), proposed(20, w2, 1_000_000, 0n), rotated(30, w1, w2, 1_000_000 + DELAY, 1n)]);
    expect(custody.findings).to.have.length(1);
    expect(custody.findings[0])
      .to.include(`became ${w2} (DEPARTMENT_HELD) at block 30`)
      .and.include(`but the pending proposal was ${w2} (CUSTODIAL)`);

    const previous = replay([fire(), proposed(20, w2, 1_000_000), rotated(30, w3, w2, 1_000_000 + DELAY)]);
    expect(previous.findings[0]).to.include(`says it replaced ${w3}, but the replayed wallet was ${w1}`);
  });

  it("flags an announced effectiveAt that is not the proposal's block time plus the delay", function () {
    const wrong = event(
      "DepartmentWalletProposed",
      20,
      0,
      { departmentId: 1n, wallet: w2, custody: 0n, effectiveAt: 1_000_201n },
      { time: 1_000_200 },
    );
    const wallets = replay([fire(), wrong]);
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0]).to.include("announces effectiveAt");
  });

  it("accepts a cancellation by the department's wallet or an ADMIN_ROLE holder, flags anyone else", function () {
    const admin = address();
    const roles = {
      holdsAt: (_c: string, role: string, account: string) => role === "ADMIN_ROLE" && account === admin,
    };
    const ok = replay(
      [fire(), proposed(20, w2), cancelled(21, w2, w1), proposed(22, w3), cancelled(23, w3, admin)],
      roles,
    );
    expect(ok.findings).to.deep.equal([]);
    const stranger = address();
    const bad = replay([fire(), proposed(20, w2), cancelled(21, w2, stranger)], roles);
    expect(bad.findings).to.have.length(1);
    expect(bad.findings[0]).to.include(
      `by ${stranger}, neither the department's wallet ${w1} nor an ADMIN_ROLE holder`,
    );
  });

  it("orders a rotation and a decision in the same block by log index", function () {
    const wallets = replay([fire(), proposed(20, w2, 1_000_000), rotated(30, w1, w2, 1_000_000 + DELAY, 0n, 3)]);
    expect(wallets.walletAt(1, { blockNumber: 30, logIndex: 1 })).to.equal(w1);
    expect(wallets.walletAt(1, { blockNumber: 30, logIndex: 4 })).to.equal(w2);
    expect(wallets.walletAt(1, { blockNumber: 5, logIndex: 0 })).to.equal(undefined);
  });

  it("lets a department-held wallet's consented change take effect at once, and marks an unconsented one", function () {
    const held = () => registered(10, w1, 1n);
    const agreed = replay([
      held(),
      proposed(20, w2, 1_000_200, 1n),
      consented(20, w2, 1),
      rotated(20, w1, w2, 1_000_200, 1n, 2),
    ]);
    expect(agreed.findings).to.deep.equal([]);
    expect(agreed.periodAt(1, { blockNumber: 21, logIndex: 0 })).to.deep.include({
      consented: true,
      unconsented: false,
      early: false,
    });
    // Without consent the delay applies, and even when waited out the new wallet's period is marked.
    const waited = replay([held(), proposed(20, w2, 1_000_200, 1n), rotated(30, w1, w2, 1_000_200 + DELAY, 1n)]);
    expect(waited.findings).to.deep.equal([]);
    expect(waited.periodAt(1, { blockNumber: 31, logIndex: 0 })).to.deep.include({
      consented: false,
      unconsented: true,
    });
    // A custodial department's consent is the platform's: it waives nothing.
    const custodial = replay([
      fire(),
      proposed(20, w2, 1_000_200),
      consented(20, w2, 1),
      rotated(20, w1, w2, 1_000_200, 0n, 2),
    ]);
    expect(custodial.findings).to.have.length(1);
    expect(custodial.findings[0]).to.include("the wallet delay is");
    // A consent to a wallet that is not the one proposed is a finding, and a new proposal needs its own consent.
    const other = replay([held(), proposed(20, w2, 1_000_200, 1n), consented(21, w3, 0)]);
    expect(other.findings[0])
      .to.include(`consented at block 21`)
      .and.include(`to a change to ${w3}, but the pending proposal was ${w2}`);
  });

  it("replays each department's active flag and decision nonce", function () {
    const wallets = replay([
      fire(),
      event("DecisionRecorded", 12, 0, { departmentId: 1n }),
      event("DepartmentActiveSet", 13, 0, { departmentId: 1n, active: false }),
      event("DecisionNonceIncreased", 14, 0, { departmentId: 1n, previousNonce: 1n, nonce: 5n }),
      event("DecisionNonceIncreased", 15, 0, { departmentId: 1n, previousNonce: 4n, nonce: 6n }),
    ]);
    expect(wallets.nonceAt(1, { blockNumber: 12, logIndex: 0 })).to.equal(0);
    expect(wallets.nonceAt(1, { blockNumber: 12, logIndex: 1 })).to.equal(1);
    expect(wallets.nonceAt(1, { blockNumber: 20, logIndex: 0 })).to.equal(6);
    expect(wallets.activeAt(1, { blockNumber: 12, logIndex: 5 })).to.equal(true);
    expect(wallets.activeAt(1, { blockNumber: 13, logIndex: 1 })).to.equal(false);
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0]).to.include("from 4, but its decisions had brought it to 5");
  });

  describe("who made each change, from its transaction", function () {
    const SALT = id("salt");
    const domain = {
      name: DECISION_DOMAIN_NAME,
      version: DECISION_DOMAIN_VERSION,
      chainId: 31337n,
      verifyingContract: CONTRACTS.ApprovalRegistry,
      salt: SALT,
    };
    const governance = address();
    const admin = address();
    const roles = {
      holdsAt: (_c: string, role: string, account: string) =>
        (role === "DEFAULT_ADMIN_ROLE" && account === governance) || (role === "ADMIN_ROLE" && account === admin),
    };
    const synthetic = syntheticCalls();
    const lookups = { ...synthetic, eip712Domain: async () => ({ fields: 0x1f, ...domain }) };
    const key = Wallet.createRandom();
    const proof = (wallet: Pick<Wallet, "signTypedData" | "address">, custody = 0) =>
      wallet.signTypedData(domain, DEPARTMENT_KEY_TYPES, { code: code("FIRE"), wallet: wallet.address, custody });
    const registration = async (from: string, keyProof: string) =>
      synthetic.made(
        registered(10, key.address),
        from,
        approvalRegistryAbi.encodeFunctionData("registerDepartment", [code("FIRE"), key.address, 0, keyProof]),
      );

    it("accepts a registration by governance with the wallet's key proof", async function () {
      const wallets = replay([await registration(governance, await proof(key))]);
      expect(await wallets.callerFindings(lookups, roles)).to.deep.equal([]);
    });

    it("flags a registration by anyone but governance, and a key proof that is not the wallet's", async function () {
      const byAdmin = replay([await registration(admin, await proof(key))]);
      const findings = await byAdmin.callerFindings(lookups, roles);
      expect(findings).to.deep.equal([
        `the registration of FIRE with wallet ${key.address} at block 10 (tx ${byAdmin.audit()[0].changes[0].transactionHash}) was made by ${admin}, which did not hold DEFAULT_ADMIN_ROLE (governance) on the approval registry then`,
      ]);
      const badProof = replay([await registration(governance, await proof(Wallet.createRandom()))]);
      expect((await badProof.callerFindings(lookups, roles))[0]).to.include(
        `its key proof is not ${key.address}'s signature of DepartmentKey`,
      );
    });

    it("flags a consent not sent by the department's wallet, and a change whose call cannot be found (cannot verify)", async function () {
      const registeredKey = await registration(governance, await proof(key));
      const next = Wallet.createRandom();
      const proposal = proposed(20, next.address, 1_000_200, 1n);
      const input = approvalRegistryAbi.encodeFunctionData("consentDepartmentWallet", [code("FIRE")]);
      const consent = synthetic.made(consented(21, next.address), admin, input);
      const wallets = replay([registeredKey, proposal, consent]);
      const findings = await wallets.callerFindings(lookups, roles);
      expect(findings).to.have.length(2);
      expect(findings[0]).to.include(`cannot verify DepartmentWalletProposed at block 20`);
      expect(findings[1])
        .to.include(`the consent to FIRE's wallet change to ${next.address}`)
        .and.include(`was sent by ${admin}, not by the department's wallet ${key.address}`);
    });
  });
});
