/**
 * Each decision's signer, custody and route on synthetic histories, with real transactions' inputs and real
 * EIP-712 signatures: sent by the department's wallet of the time, or relayed through decideBySig with a
 * signature the auditor verifies itself; anything else, and any decision by a wallet that took over before its
 * delay, is a finding.
 */
import { expect } from "chai";
import { Wallet, id } from "ethers";
import { approvalRegistryAbi } from "../../scripts/audit/contractViews.ts";
import { auditDecisions, type DecisionContext } from "../../scripts/audit/decisionAudit.ts";
import { DepartmentWallets } from "../../scripts/audit/departmentWallets.ts";
import type { TransactionFacts } from "../../scripts/audit/transactionLookups.ts";
import { CONTRACTS, address, code, event } from "./syntheticChain.ts";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DECISION_TYPES } from "../../abis/index.ts";

const DELAY = 60;
const CHAIN_ID = 31337;
const registry = CONTRACTS.ApprovalRegistry;
const domain = {
  name: DECISION_DOMAIN_NAME,
  version: DECISION_DOMAIN_VERSION,
  chainId: CHAIN_ID,
  verifyingContract: registry,
};
const remarksHash = id("looks fine");
const versions = (1n << 16n) | (1n << 8n); // one document, at version 1

describe("auditor: each decision's signer, custody and route (synthetic events, real signatures)", function () {
  const held = Wallet.createRandom(); // department-held key
  const custodial = Wallet.createRandom();
  const relayer = address();
  const transactions = new Map<string, TransactionFacts>();
  let wallets: DepartmentWallets;
  const context = (overrides: Partial<DecisionContext["lookups"]> = {}): DecisionContext => ({
    chainId: CHAIN_ID,
    approvalRegistry: registry,
    lookups: {
      transactionOf: async (hash) => transactions.get(hash)!,
      timeOf: async () => "2026-01-01T00:00:00.000Z",
      hasCode: async () => false,
      isValidSignature: async () => false,
      ...overrides,
    },
  });

  /** A DecisionRecorded (department 1, stage index 0, token 7) in transaction `tx` sent by `from` with input `data`. */
  const decision = (block: number, signer: string, custody: bigint, from: string, data: string, to = registry) => {
    const e = event("DecisionRecorded", block, 1, {
      tokenId: 7n,
      departmentId: 1n,
      stage: 0n,
      decision: 1n,
      reasonCode: 0n,
      reviewedMask: 1n,
      documentVersions: versions,
      remarksHash,
      signer,
      custody,
    });
    transactions.set(e.transactionHash, { from, to, data });
    return e;
  };
  const direct = () => approvalRegistryAbi.encodeFunctionData("approve", [7n, 1n, versions, remarksHash]);
  const signed = async (signer: Pick<Wallet, "signTypedData">, overrides: Record<string, unknown> = {}) => {
    const value = {
      tokenId: 7n,
      departmentId: 1n,
      decision: 1n,
      reasonCode: 0n,
      reviewedMask: 1n,
      reviewedVersions: versions,
      remarksHash,
      nonce: 0n,
      deadline: 2_000_000_000n,
      ...overrides,
    };
    const signature = await signer.signTypedData(domain, DECISION_TYPES, value);
    return approvalRegistryAbi.encodeFunctionData("decideBySig", [value, signature]);
  };

  before(function () {
    // FIRE: custodial wallet from block 10; a department-held wallet proposed at block 20, activated after the delay.
    wallets = new DepartmentWallets(
      [
        event("DepartmentRegistered", 10, 0, {
          departmentId: 1n,
          code: code("FIRE"),
          wallet: custodial.address,
          custody: 0n,
        }),
        event(
          "DepartmentWalletProposed",
          20,
          0,
          { departmentId: 1n, wallet: held.address, custody: 1n, effectiveAt: BigInt(1_000_200 + DELAY) },
          { time: 1_000_200 },
        ),
        event(
          "DepartmentWalletRotated",
          30,
          0,
          { departmentId: 1n, previousWallet: custodial.address, wallet: held.address, custody: 1n },
          { time: 1_000_200 + DELAY },
        ),
      ],
      DELAY,
    );
  });

  it("passes a decision sent by the custodial wallet of its time and one relayed with the department's own signature", async function () {
    const events = [
      decision(15, custodial.address, 0n, custodial.address, direct()),
      decision(40, held.address, 1n, relayer, await signed(held)),
    ];
    const findings: string[] = [];
    const { decisions } = await auditDecisions(
      events,
      [[{ departmentId: 1, status: 1 }]],
      wallets,
      context(),
      findings,
    );
    expect(findings).to.deep.equal([]);
    expect(
      decisions.map((d) => [
        d.route,
        d.sender,
        d.signer,
        d.custody,
        d.departmentWallet,
        d.departmentCustody,
        d.walletMatches,
      ]),
    ).to.deep.equal([
      ["SENT", custodial.address, custodial.address, "CUSTODIAL", custodial.address, "CUSTODIAL", true],
      ["RELAYED", relayer, held.address, "DEPARTMENT_HELD", held.address, "DEPARTMENT_HELD", true],
    ]);
  });

  it("flags a signer that was not the department's wallet at its block (the old wallet after the rotation)", async function () {
    const findings: string[] = [];
    await auditDecisions(
      [decision(40, custodial.address, 0n, custodial.address, direct())],
      [],
      wallets,
      context(),
      findings,
    );
    expect(
      findings.some((f) =>
        f.includes(`was signed by ${custodial.address}, but the department's wallet at block 40 was ${held.address}`),
      ),
    ).to.equal(true);
    expect(
      findings.some((f) =>
        f.includes("records custody CUSTODIAL, but the department's custody at block 40 was DEPARTMENT_HELD"),
      ),
    ).to.equal(true);
  });

  it("flags a relayed signature that is not the signer's, one relayed after its deadline, and a signed decision that differs from the recorded one", async function () {
    const forged = [decision(40, held.address, 1n, relayer, await signed(Wallet.createRandom()))];
    const findings: string[] = [];
    const { decisions } = await auditDecisions(forged, [], wallets, context(), findings);
    expect(decisions[0]).to.deep.include({ route: "RELAYED", walletMatches: false });
    expect(findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${forged[0].transactionHash}) was relayed by ${relayer} through decideBySig, but the signature is not ${held.address}'s`,
    ]);

    const late = [decision(40, held.address, 1n, relayer, await signed(held, { deadline: 1_700_000_000n }))];
    const lateFindings: string[] = [];
    await auditDecisions(late, [], wallets, context(), lateFindings);
    expect(lateFindings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${late[0].transactionHash}) was relayed at 2026-01-01T00:00:00.000Z, after its signature's deadline 2023-11-14T22:13:20.000Z`,
    ]);

    const other = [decision(41, held.address, 1n, relayer, await signed(held, { tokenId: 8n }))];
    const otherFindings: string[] = [];
    await auditDecisions(other, [], wallets, context(), otherFindings);
    expect(otherFindings[0]).to.include("the decideBySig call carries a different tokenId");
  });

  it("asks a contract wallet (EIP-1271) whether it signed, at the decision's block", async function () {
    const asked: unknown[] = [];
    const safe = context({ hasCode: async () => true, isValidSignature: async (...args) => (asked.push(args), true) });
    const findings: string[] = [];
    await auditDecisions([decision(40, held.address, 1n, relayer, await signed(held))], [], wallets, safe, findings);
    expect(findings).to.deep.equal([]);
    expect(asked).to.have.length(1);
    expect((asked[0] as unknown[])[0]).to.equal(held.address);
    expect((asked[0] as unknown[])[3]).to.equal(40);
  });

  it("flags a direct decision sent by someone else, and a transaction that is no decision call at all", async function () {
    const findings: string[] = [];
    const stranger = address();
    const { decisions } = await auditDecisions(
      [
        decision(15, custodial.address, 0n, stranger, direct()),
        decision(16, custodial.address, 0n, custodial.address, "0x12345678", address()),
      ],
      [],
      wallets,
      context(),
      findings,
    );
    expect(decisions.map((d) => d.route)).to.deep.equal(["SENT", "UNKNOWN"]);
    expect(findings[0]).to.include(
      `is a direct approve call sent by ${stranger}, not by its signer ${custodial.address}`,
    );
    expect(findings[1]).to.include("neither a decision sent by").and.include("selector 0x12345678");
  });

  it("flags every decision by a wallet that took over before the delay ran out (rotation inside its window)", async function () {
    const early = Wallet.createRandom();
    const rushed = new DepartmentWallets(
      [
        event("DepartmentRegistered", 10, 0, {
          departmentId: 1n,
          code: code("FIRE"),
          wallet: custodial.address,
          custody: 0n,
        }),
        event(
          "DepartmentWalletProposed",
          20,
          0,
          { departmentId: 1n, wallet: early.address, custody: 0n, effectiveAt: BigInt(1_000_200 + DELAY) },
          { time: 1_000_200 },
        ),
        event(
          "DepartmentWalletRotated",
          20,
          1,
          { departmentId: 1n, previousWallet: custodial.address, wallet: early.address, custody: 0n },
          { time: 1_000_200 },
        ),
      ],
      DELAY,
    );
    expect(rushed.findings).to.have.length(1);
    const findings: string[] = [];
    const events = [
      decision(21, early.address, 0n, early.address, direct()),
      decision(22, early.address, 0n, early.address, direct()),
    ];
    const { decisions } = await auditDecisions(events, [], rushed, context(), findings);
    expect(decisions.map((d) => d.walletMatches)).to.deep.equal([false, false]);
    expect(findings).to.have.length(2);
    expect(findings[0]).to.include(
      `was made by ${early.address}, which became FIRE's wallet at block 20 without waiting the wallet delay after its proposal (proposed at block 20)`,
    );
  });

  it("keeps each decision's findings its own while lookups answer out of order, listed in chain order", async function () {
    const stranger = address();
    const sound = decision(15, custodial.address, 0n, custodial.address, direct());
    const bad = decision(16, custodial.address, 0n, stranger, direct());
    const slowFirst = context({
      transactionOf: async (hash) => {
        if (hash === sound.transactionHash) await new Promise((r) => setTimeout(r, 50));
        return transactions.get(hash)!;
      },
    });
    const findings: string[] = [];
    const { decisions } = await auditDecisions([sound, bad], [], wallets, slowFirst, findings);
    expect(decisions.map((d) => d.walletMatches)).to.deep.equal([true, false]);
    expect(findings).to.have.length(1);
    expect(findings[0]).to.include(bad.transactionHash);
  });

  it("reads the versions reviewed from the event's mask and packed word", async function () {
    const findings: string[] = [];
    const { decisions } = await auditDecisions(
      [decision(15, custodial.address, 0n, custodial.address, direct())],
      [],
      wallets,
      context(),
      findings,
    );
    expect(decisions[0].reviewed).to.deep.equal([{ docIndex: 0, version: 1 }]);
    expect(decisions[0].remarksHash).to.equal(remarksHash);
  });
});
