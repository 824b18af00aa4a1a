/**
 * Each decision against the call that made it, on synthetic histories with real calldata and real EIP-712
 * signatures in the registry's salted domain: every field of the Decision against the event and against the chain
 * just before it (stage, round, the latest anchored hashes, the department's nonce, the deadline); decide made by
 * the department's wallet of the time (a Safe's call counts as the Safe's); decideBySig's signature recomputed and
 * checked by the auditor; a call that cannot be found is "cannot verify"; wallets that took over early or without
 * the outgoing department-held wallet's consent, and inactive departments, are findings; custody labels.
 */
import { expect } from "chai";
import { Wallet, ZeroHash, id } from "ethers";
import { approvalRegistryAbi } from "../../scripts/audit/contractViews.ts";
import { auditDecisions, type DecisionContext } from "../../scripts/audit/decisionAudit.ts";
import { DepartmentWallets } from "../../scripts/audit/departmentWallets.ts";
import { inChainOrder, type TimedEvent } from "../../scripts/audit/logReader.ts";
import type { Eip712Domain } from "../../scripts/audit/transactionLookups.ts";
import {
  CONTRACTS,
  address,
  consented,
  event,
  proposed,
  registered,
  rotated,
  syntheticCalls,
} from "./syntheticChain.ts";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DECISION_TYPES } from "../../abis/index.ts";

const DELAY = 60;
const CHAIN_ID = 31337;
const registry = CONTRACTS.ApprovalRegistry;
const [name, version, salt] = [DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, id("this deployment")];
const typed = { name, version, chainId: CHAIN_ID, verifyingContract: registry, salt };
const DOMAIN: Eip712Domain = { ...typed, fields: 0x1f, chainId: BigInt(CHAIN_ID) };
const remarksHash = id("looks fine");
const PLAN_V1 = id("plan v1");
const PLAN_V2 = id("plan v2");
const ROUND = 1_000_100n; // stage 0 started at block 10
const NOW = 1_000_500; // every decision's block time in these tests
const packed = (versions: number[]) =>
  versions.reduce((word, v, i) => word | (BigInt(v) << BigInt(16 + 15 * i)), BigInt(versions.length) << 8n);

describe("auditor: each decision against its call, its signature and the chain (synthetic events, real signatures)", function () {
  const held = Wallet.createRandom(); // department-held key
  const custodial = Wallet.createRandom();
  const relayer = address();
  const synthetic = syntheticCalls();
  const calls = synthetic.calls;
  const signedBy: unknown[][] = [];
  let wallets: DepartmentWallets;

  const context = (overrides: Partial<DecisionContext["lookups"]> = {}): DecisionContext => ({
    chainId: CHAIN_ID,
    approvalRegistry: registry,
    lookups: {
      transactionOf: async () => ({ from: relayer, to: registry, data: "0x" }),
      timeOf: async () => new Date(NOW * 1000).toISOString(),
      callsTo: synthetic.callsTo,
      eip712Domain: async () => DOMAIN,
      isSignedBy: async (signer, digest, signature, block) => {
        signedBy.push([signer, digest, signature, block]);
        return synthetic.isSignedBy(signer, digest, signature);
      },
      ...overrides,
    },
  });

  /** The licence's review before its decisions: stage 0 started at block 10, the plan anchored (v1, v2 at block 12). */
  const review = (withV2 = false): TimedEvent[] => [
    event("DocumentAnchored", 5, 0, { tokenId: 7n, docIndex: 0n, version: 1n, sha256Hash: PLAN_V1 }),
    event("ReviewStarted", 10, 0, { tokenId: 7n, workflowId: 1n }),
    event("StageStarted", 10, 1, { tokenId: 7n, stage: 0n, startedAt: ROUND }),
    ...(withV2
      ? [event("DocumentAnchored", 12, 0, { tokenId: 7n, docIndex: 0n, version: 2n, sha256Hash: PLAN_V2 })]
      : []),
  ];

  /** What a Decision and its DecisionRecorded have in common (department 1, stage 0, token 7). */
  const common = { tokenId: 7n, departmentId: 1n, stage: 0n, decision: 1n, reasonCode: 0n, remarksHash };
  const value = (overrides: Record<string, unknown> = {}) => ({
    ...{ ...common, round: ROUND, reviewedMask: 0n, documents: [PLAN_V1], nonce: 0n, deadline: BigInt(NOW + 600) },
    ...overrides,
  });
  const decide = (overrides: Record<string, unknown> = {}) =>
    approvalRegistryAbi.encodeFunctionData("decide", [value(overrides)]);
  const bySig = async (
    signer: Pick<Wallet, "signTypedData">,
    overrides: Record<string, unknown> = {},
    domain: object = typed,
  ) => {
    const v = value(overrides);
    const signature = await signer.signTypedData(domain, DECISION_TYPES, v);
    return approvalRegistryAbi.encodeFunctionData("decideBySig", [v, signature]);
  };

  /** A DecisionRecorded (department 1, stage 0, token 7) made by the call `input` from `from`. */
  const recorded = (
    block: number,
    signer: string,
    custody: bigint,
    from: string,
    input: string,
    extra: Record<string, unknown> = {},
  ) => {
    const args = { ...common, reviewedMask: 1n, documentVersions: packed([1]), signer, custody, ...extra };
    const e = event("DecisionRecorded", block, 1, args);
    return synthetic.made(e, from, input);
  };

  /** FIRE: custodial wallet from block 1; a department-held wallet proposed at block 20, activated after the delay. */
  const history = (extra: TimedEvent[] = []) =>
    new DepartmentWallets(
      inChainOrder([
        registered(1, custodial.address),
        proposed(20, held.address, 1_000_200, 1n),
        rotated(30, custodial.address, held.address, 1_000_200 + DELAY, 1n),
        ...extra,
      ]),
      DELAY,
    );

  const audit = async (events: TimedEvent[], departments = wallets, ctx = context()) => {
    const findings: string[] = [];
    const { decisions } = await auditDecisions(inChainOrder([...review(), ...events]), [], departments, ctx, findings);
    // The replay of the review's rules is tested in reviewReplay.test.ts: here only the decision's own findings.
    return { decisions, findings: findings.filter((f) => !f.includes("WorkflowStageRegistered")) };
  };

  before(function () {
    wallets = history();
  });

  it("passes a decide made by the custodial wallet of its time and a decideBySig signed by the department-held wallet, labelled by custody", async function () {
    const first = recorded(15, custodial.address, 0n, custodial.address, decide());
    // The second decision: nonce 1 (the first consumed 0), after the rotation.
    const second = recorded(40, held.address, 1n, relayer, await bySig(held, { nonce: 1n }));
    const departments = history([first, second]);
    const { decisions, findings } = await audit([first, second], departments);
    expect(findings).to.deep.equal([]);
    expect(decisions.map((d) => [d.route, d.sender, d.signedBy, d.walletMatches])).to.deep.equal([
      ["SENT", custodial.address, "platform-signed", true],
      ["RELAYED", relayer, "department-signed", true],
    ]);
  });

  it("flags a decide made by anyone but the department's wallet at its block", async function () {
    const stranger = address();
    const e = recorded(15, custodial.address, 0n, stranger, decide());
    const { findings } = await audit([e]);
    expect(findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${e.transactionHash}) is a direct decide call made by ${stranger}, not by the department's wallet ${custodial.address}`,
    ]);
  });

  it("counts a Safe's call (execTransaction -> decide) as the Safe's: passes when the Safe is the department's wallet", async function () {
    const safe = address();
    const safeHeld = new DepartmentWallets([registered(1, safe, 1n)], DELAY);
    const e = recorded(15, safe, 1n, safe, decide());
    calls.set(e.transactionHash, { calls: [{ from: safe, input: decide() }], how: "safe" });
    const { decisions, findings } = await audit([e], safeHeld);
    expect(findings).to.deep.equal([]);
    expect(decisions[0]).to.deep.include({ route: "SENT", sender: safe, signedBy: "department-signed" });
  });

  it("reports a decision whose call cannot be found as a finding (cannot verify), not a pass", async function () {
    const e = recorded(15, custodial.address, 0n, custodial.address, decide());
    calls.set(e.transactionHash, { calls: null, how: "unknown" });
    const { decisions, findings } = await audit([e]);
    expect(decisions[0]).to.deep.include({ route: "UNKNOWN", walletMatches: false });
    expect(findings).to.have.length(1);
    expect(findings[0]).to.include("cannot verify DecisionRecorded");
    // A call in the transaction that is not the decision (another token) is no proof either.
    const other = recorded(16, custodial.address, 0n, custodial.address, decide({ tokenId: 8n }));
    const { findings: otherFindings } = await audit([other]);
    expect(otherFindings[0]).to.include("no decide or decideBySig call that made it");
  });

  it("recomputes the digest in the registry's salted domain: a signature made for another network (other salt) fails", async function () {
    const replayed = recorded(40, held.address, 1n, relayer, await bySig(held, {}, { ...typed, salt: id("staging") }));
    const { decisions, findings } = await audit([replayed]);
    expect(decisions[0]).to.deep.include({ route: "RELAYED", walletMatches: false });
    expect(findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${replayed.transactionHash}) was relayed by ${relayer} through decideBySig, but the signature is not the department wallet ${held.address}'s`,
    ]);
    // A signature by another key, and a domain the registry reports wrongly, are findings too.
    const forged = recorded(41, held.address, 1n, relayer, await bySig(Wallet.createRandom()));
    expect((await audit([forged])).findings[0]).to.include("but the signature is not the department wallet");
    const wrongDomain = recorded(42, held.address, 1n, relayer, await bySig(held));
    const lying = context({ eip712Domain: async () => ({ ...DOMAIN, chainId: 1n }) });
    expect((await audit([wrongDomain], wallets, lying)).findings[0]).to.include("eip712Domain() says chain id 1");
  });

  it("asks a contract wallet (EIP-1271) through the same check, with the wallet of the time and the decision's block", async function () {
    signedBy.length = 0;
    const e = recorded(40, held.address, 1n, relayer, await bySig(held));
    await audit([e], wallets, context({ isSignedBy: async (...args) => (signedBy.push(args), true) }));
    expect(signedBy).to.have.length(1);
    expect(signedBy[0][0]).to.equal(held.address);
    expect(signedBy[0][3]).to.equal(40);
  });

  it("flags a signed decision over an older version than the latest anchored (the documents are the chain's, not the event's word)", async function () {
    // The department signed plan v1; v2 was anchored at block 12; the event claims the review anyway.
    const stale = recorded(40, held.address, 1n, relayer, await bySig(held), { documentVersions: packed([2]) });
    const { findings } = await audit([stale, ...review(true).slice(3)]);
    expect(findings).to.have.length(1);
    expect(findings[0])
      .to.include(`does not match the chain at block 40: documents [${PLAN_V1}]`)
      .and.include(`[${PLAN_V2}]`);
  });

  it("flags a call whose fields differ from the event: the mask, the stage, the decision", async function () {
    const e = recorded(40, held.address, 1n, relayer, await bySig(held, { reviewedMask: 1n }), {
      reviewedMask: 1n,
      decision: 3n,
    });
    const ok = await audit([e]);
    expect(ok.findings).to.have.length(1);
    expect(ok.findings[0]).to.include("differs from the recorded decision in decision (call 1, event 3)");
    const stage = recorded(41, held.address, 1n, relayer, await bySig(held, { stage: 1n }));
    const f = (await audit([stage])).findings;
    expect(f[0]).to.include("differs from the recorded decision in stage (call 1, event 0)");
    expect(f[1]).to.include("stage 1 (current: 0)");
  });

  it("flags a held-back signature from an earlier round, a nonce the department had used, and a deadline out of bounds", async function () {
    const oldRound = recorded(40, held.address, 1n, relayer, await bySig(held, { round: ROUND - 50n }));
    expect((await audit([oldRound])).findings[0]).to.include(`round ${ROUND - 50n} (the stage started at ${ROUND})`);

    const first = recorded(38, held.address, 1n, relayer, await bySig(held, { nonce: 0n }));
    const reused = recorded(40, held.address, 1n, relayer, await bySig(held, { nonce: 0n }));
    const departments = history([first, reused]);
    const { findings } = await audit([reused], departments);
    expect(findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${reused.transactionHash}): its call carries nonce 0, but the department's next nonce then was 1`,
    ]);

    const late = recorded(40, held.address, 1n, relayer, await bySig(held, { deadline: BigInt(NOW - 1) }));
    expect((await audit([late])).findings[0]).to.include("after its deadline");
    const far = recorded(40, held.address, 1n, relayer, await bySig(held, { deadline: BigInt(NOW + 86_401) }));
    expect((await audit([far])).findings[0]).to.include("more than 86400 s after it was recorded");
  });

  it("flags a signer that was not the department's wallet at its block, and a custody that was not its custody", async function () {
    const e = recorded(40, custodial.address, 0n, custodial.address, decide());
    const { findings } = await audit([e]);
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
    expect(
      findings.some((f) => f.includes(`made by ${custodial.address}, not by the department's wallet ${held.address}`)),
    ).to.equal(true);
  });

  it("flags a decision by a wallet a department-held department got without its outgoing wallet's consent, naming department, wallet and licence", async function () {
    const taker = Wallet.createRandom();
    const proposal = (block: number, time: number) => proposed(block, taker.address, time, 1n);
    const rotation = (block: number, time: number) => rotated(block, held.address, taker.address, time, 1n);
    // After the delay, but the department-held wallet never consented.
    const unconsented = history([proposal(50, 1_000_300), rotation(60, 1_000_300 + DELAY)]);
    expect(unconsented.findings).to.deep.equal([]);
    const e = recorded(70, taker.address, 1n, relayer, await bySig(taker));
    const { decisions, findings } = await audit([e], unconsented);
    expect(decisions[0].walletMatches).to.equal(false);
    expect(findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${e.transactionHash}) on licence 7 was signed by ${taker.address}, which FIRE got at block 60 (tx ${unconsented.periodAt(1, { blockNumber: 61, logIndex: 0 })!.since.transactionHash}) through a wallet change its outgoing department-held wallet ${held.address} did not consent to`,
    ]);
    // With the outgoing wallet's consent, activated at once (the contract allows it): no finding.
    const agreed = history([proposal(50, 1_000_300), consented(51, taker.address), rotation(52, 1_000_320)]);
    expect(agreed.findings).to.deep.equal([]);
    expect((await audit([e], agreed)).findings).to.deep.equal([]);
  });

  it("flags a decision by a department deactivated at that block", async function () {
    const e = recorded(40, held.address, 1n, relayer, await bySig(held));
    const inactive = history([event("DepartmentActiveSet", 35, 0, { departmentId: 1n, active: false })]);
    const { findings } = await audit([e], inactive);
    expect(findings).to.deep.equal([
      `decision APPROVED of FIRE in stage 1 (tx ${e.transactionHash}) was made while FIRE was not active (DepartmentActiveSet)`,
    ]);
    const again = history([
      event("DepartmentActiveSet", 35, 0, { departmentId: 1n, active: false }),
      event("DepartmentActiveSet", 36, 0, { departmentId: 1n, active: true }),
    ]);
    expect((await audit([e], again)).findings).to.deep.equal([]);
  });

  it("flags every decision by a wallet that took over before the delay ran out (rotation inside its window)", async function () {
    const early = Wallet.createRandom();
    const rushed = new DepartmentWallets(
      [
        registered(1, custodial.address),
        proposed(20, early.address, 1_000_200),
        rotated(20, custodial.address, early.address, 1_000_200, 0n, 1),
      ],
      DELAY,
    );
    expect(rushed.findings).to.have.length(1);
    const e = recorded(21, early.address, 0n, early.address, decide());
    const { decisions, findings } = await audit([e], rushed);
    expect(decisions[0].walletMatches).to.equal(false);
    expect(findings[0]).to.include(
      `was made by ${early.address}, which became FIRE's wallet at block 20 without waiting the wallet delay after its proposal (proposed at block 20)`,
    );
  });

  it("keeps each decision's findings its own while lookups answer out of order, listed in chain order", async function () {
    const stranger = address();
    const sound = recorded(15, custodial.address, 0n, custodial.address, decide());
    const bad = recorded(16, custodial.address, 0n, stranger, decide({ nonce: 1n }));
    const departments = history([sound, bad]);
    const slowFirst = context({
      callsTo: async (hash) => {
        if (hash === sound.transactionHash) await new Promise((r) => setTimeout(r, 50));
        return calls.get(hash)!;
      },
    });
    const { decisions, findings } = await audit([sound, bad], departments, slowFirst);
    expect(decisions.map((d) => d.walletMatches)).to.deep.equal([true, false]);
    expect(findings).to.have.length(1);
    expect(findings[0]).to.include(bad.transactionHash);
  });

  it("reads the versions reviewed from the event's mask and packed word", async function () {
    const { decisions } = await audit([recorded(15, custodial.address, 0n, custodial.address, decide())]);
    expect(decisions[0].reviewed).to.deep.equal([{ docIndex: 0, version: 1 }]);
    expect(decisions[0].remarksHash).to.equal(remarksHash);
    expect(ZeroHash).to.not.equal(decisions[0].remarksHash);
  });
});
