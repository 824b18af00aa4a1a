/**
 * The department wallet replay on synthetic histories: a rotation counts only if it activates the pending
 * proposal after the wallet delay (block time), and a wallet that took over early marks its whole period.
 */
import { expect } from "chai";
import { DepartmentWallets } from "../../scripts/audit/departmentWallets.ts";
import { address, code, event } from "./syntheticChain.ts";

const DELAY = 60;
const [w1, w2, w3] = [address(), address(), address()];
const registered = () =>
  event("DepartmentRegistered", 10, 0, { departmentId: 1n, code: code("FIRE"), wallet: w1, custody: 0n });
const proposed = (block: number, wallet: string, time = 1_000_000 + 10 * block, custody = 0n) =>
  event(
    "DepartmentWalletProposed",
    block,
    0,
    { departmentId: 1n, wallet, custody, effectiveAt: BigInt(time + DELAY) },
    { time },
  );
const rotated = (block: number, previousWallet: string, wallet: string, time?: number, custody = 0n) =>
  event("DepartmentWalletRotated", block, 0, { departmentId: 1n, previousWallet, wallet, custody }, { time });
const cancelled = (block: number, wallet: string, by: string) =>
  event("DepartmentWalletCancelled", block, 0, { departmentId: 1n, wallet, by });

describe("auditor: department wallet changes and their delays (synthetic events)", function () {
  it("accepts a rotation that activates its proposal after the delay, and reports how long it waited", function () {
    const wallets = new DepartmentWallets(
      [registered(), proposed(20, w2, 1_000_200), rotated(30, w1, w2, 1_000_200 + DELAY)],
      DELAY,
    );
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
    const wallets = new DepartmentWallets(
      [registered(), proposed(20, w2, 1_000_200), rotated(21, w1, w2, 1_000_200 + DELAY - 1)],
      DELAY,
    );
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0])
      .to.include(`FIRE's wallet became ${w2}`)
      .and.include(`${DELAY - 1} s after its proposal`)
      .and.include(`the wallet delay is ${DELAY} s`);
    expect(wallets.periodAt(1, { blockNumber: 22, logIndex: 0 })!.early).to.equal(true);
  });

  it("flags a rotation with no pending proposal, or after its proposal was cancelled", function () {
    const none = new DepartmentWallets([registered(), rotated(30, w1, w2)], DELAY);
    expect(none.findings).to.have.length(1);
    expect(none.findings[0]).to.include("with no pending proposal");

    const afterCancel = new DepartmentWallets(
      [registered(), proposed(20, w2), cancelled(21, w2, w1), rotated(40, w1, w2)],
      DELAY,
    );
    expect(afterCancel.findings).to.have.length(1);
    expect(afterCancel.findings[0]).to.include("with no pending proposal");
    expect(afterCancel.periodAt(1, { blockNumber: 41, logIndex: 0 })!.early).to.equal(true);
  });

  it("measures the delay from the latest proposal: an earlier proposal that was replaced does not count", function () {
    // w2 proposed long ago, then w3 proposed just before the rotation to w3: only w3's proposal is pending.
    const wallets = new DepartmentWallets(
      [
        registered(),
        proposed(20, w2, 1_000_000),
        proposed(30, w3, 1_000_100),
        rotated(31, w1, w3, 1_000_000 + DELAY + 5),
      ],
      DELAY,
    );
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0]).to.include(`${DELAY + 5 - 100} s after its proposal`);
    expect(wallets.audit()[0].changes[1])
      .to.deep.include({ kind: "PROPOSED", wallet: w2 })
      .and.have.property("replacedBy");
  });

  it("flags a rotation to another wallet or custody than the one proposed, and a wrong previous wallet", function () {
    const other = new DepartmentWallets(
      [registered(), proposed(20, w2, 1_000_000), rotated(30, w1, w3, 1_000_000 + DELAY)],
      DELAY,
    );
    expect(other.findings).to.have.length(1);
    expect(other.findings[0]).to.include(`but the pending proposal was ${w2}`);

    const custody = new DepartmentWallets(
      [registered(), proposed(20, w2, 1_000_000, 0n), rotated(30, w1, w2, 1_000_000 + DELAY, 1n)],
      DELAY,
    );
    expect(custody.findings).to.have.length(1);
    expect(custody.findings[0])
      .to.include(`became ${w2} (DEPARTMENT_HELD) at block 30`)
      .and.include(`but the pending proposal was ${w2} (CUSTODIAL)`);

    const previous = new DepartmentWallets(
      [registered(), proposed(20, w2, 1_000_000), rotated(30, w3, w2, 1_000_000 + DELAY)],
      DELAY,
    );
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
    const wallets = new DepartmentWallets([registered(), wrong], DELAY);
    expect(wallets.findings).to.have.length(1);
    expect(wallets.findings[0]).to.include("announces effectiveAt");
  });

  it("accepts a cancellation by the department's wallet or an ADMIN_ROLE holder, flags anyone else", function () {
    const admin = address();
    const roles = {
      holdsAt: (_c: string, role: string, account: string) => role === "ADMIN_ROLE" && account === admin,
    };
    const ok = new DepartmentWallets(
      [registered(), proposed(20, w2), cancelled(21, w2, w1), proposed(22, w3), cancelled(23, w3, admin)],
      DELAY,
      roles,
    );
    expect(ok.findings).to.deep.equal([]);
    const stranger = address();
    const bad = new DepartmentWallets([registered(), proposed(20, w2), cancelled(21, w2, stranger)], DELAY, roles);
    expect(bad.findings).to.have.length(1);
    expect(bad.findings[0]).to.include(
      `by ${stranger}, neither the department's wallet ${w1} nor an ADMIN_ROLE holder`,
    );
  });

  it("orders a rotation and a decision in the same block by log index", function () {
    const wallets = new DepartmentWallets(
      [registered(), proposed(20, w2, 1_000_000), { ...rotated(30, w1, w2, 1_000_000 + DELAY), logIndex: 3 }],
      DELAY,
    );
    expect(wallets.walletAt(1, { blockNumber: 30, logIndex: 1 })).to.equal(w1);
    expect(wallets.walletAt(1, { blockNumber: 30, logIndex: 4 })).to.equal(w2);
    expect(wallets.walletAt(1, { blockNumber: 5, logIndex: 0 })).to.equal(undefined);
  });
});
