/**
 * A department whose wallet is its reviewers' passkeys (DepartmentPasskeyAccount, EIP-1271, N of M WebAuthn P-256
 * signers) deciding through the approval registry's decideBySig, on a London chain: no P-256 precompile, so the
 * figures logged by the gas suite are the ones a Besu network (London) would see. Real P-256 keys and WebAuthn
 * assertions built byte for byte (test/contracts/helpers/passkeys.ts).
 */
import { expect } from "chai";
import { network } from "hardhat";
import { TypedDataEncoder, ZeroHash, getBytes, id, keccak256 } from "ethers";
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES } from "../../abis/index.ts";
import type { ApprovalRegistry, DepartmentPasskeyAccount } from "../../types/ethers-contracts/index.ts";
import {
  BUILDING_PERMIT,
  COMMITMENT,
  Custody,
  Decision,
  ROLES,
  VALIDITY_SECONDS,
  WALLET_DELAY,
  code,
  domainOf,
  sha,
  stage,
  uuid,
  type DecisionFields,
} from "./helpers/fixtures.ts";
import {
  FLAG_BS,
  FLAG_UP,
  FLAG_UV,
  assert,
  byReviewerId,
  createPasskey,
  encodeApprovals,
  signWithPasskeys,
  type Passkey,
} from "./helpers/passkeys.ts";

// London, as Besu runs the contracts: P256.verify falls back to Solidity (the default chain has a P-256 precompile).
const { ethers, networkHelpers } = await network.create("london");

const MAGIC = "0x1626ba7e";
const INVALID = "0xffffffff";
const DOCUMENTS = [0, 1, 2].map((i) => sha(`doc-${i}-v1`));

const CHANGE_TYPES = {
  ReviewerChange: [
    { name: "add", type: "bytes[]" },
    { name: "remove", type: "bytes[]" },
    { name: "threshold", type: "uint16" },
    { name: "nonce", type: "uint64" },
    { name: "deadline", type: "uint64" },
  ],
};

interface Change {
  add: string[];
  remove: string[];
  threshold: number;
  nonce: bigint;
  deadline: bigint;
}

/**
 * The platform as deployed (token, documents, verifier, extension, registry; one key per role), department A
 * custodial, FIRE a passkey account of three reviewers needing two, SOLO a passkey account of one; both registered
 * by governance with their passkeys' key proofs. BUILDING_PERMIT: stage 0 [FIRE], stage 1 [SOLO], stage 2 [A];
 * token 1 minted with three documents and submitted.
 */
async function deployPasskeyDepartments() {
  const signers = await ethers.getSigners();
  const [deployer, admin, operator, keeper, applicant, relayer, custodialA] = signers;
  const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "https://verify.example/", deployer]);
  const documents = await ethers.deployContract("DocumentRegistry", [await token.getAddress(), deployer]);
  const verifier = await ethers.deployContract("DecisionVerifier");
  const extension = await ethers.deployContract("RegistryExtension");
  const registry = (await ethers.deployContract("ApprovalRegistry", [
    await token.getAddress(),
    await documents.getAddress(),
    await verifier.getAddress(),
    await extension.getAddress(),
    deployer.address,
    WALLET_DELAY,
  ])) as unknown as ApprovalRegistry;
  await token.setApprovalRegistry(await registry.getAddress());
  await documents.setReviewRegistry(await registry.getAddress());
  for (const c of [token, documents, registry]) await c.grantRole(ROLES.OPERATOR, operator.address);
  for (const c of [token, registry]) await c.grantRole(ROLES.ADMIN, admin.address);
  await registry.grantRole(ROLES.KEEPER, keeper.address);
  await registry.grantRole(ROLES.DEFAULT_ADMIN, admin.address);
  const domain = await domainOf(registry);

  const proofOf = (name: string, wallet: string, custody: bigint) => ({ code: code(name), wallet, custody });
  await registry
    .connect(admin)
    .registerDepartment(
      code("A"),
      custodialA.address,
      Custody.Custodial,
      await custodialA.signTypedData(domain, DEPARTMENT_KEY_TYPES, proofOf("A", custodialA.address, Custody.Custodial)),
    );

  const reviewers = [createPasskey(), createPasskey(), createPasskey()];
  const soloReviewer = createPasskey();
  const fire = await ethers.deployContract("DepartmentPasskeyAccount", [reviewers.map((r) => r.key), 2]);
  const solo = await ethers.deployContract("DepartmentPasskeyAccount", [[soloReviewer.key], 1]);
  for (const [name, account, keys] of [
    ["FIRE", fire, reviewers.slice(0, 2)],
    ["SOLO", solo, [soloReviewer]],
  ] as const) {
    const wallet = await account.getAddress();
    const digest = TypedDataEncoder.hash(domain, DEPARTMENT_KEY_TYPES, proofOf(name, wallet, Custody.DepartmentHeld));
    await registry
      .connect(admin)
      .registerDepartment(code(name), wallet, Custody.DepartmentHeld, signWithPasskeys(digest, [...keys]));
  }

  await registry
    .connect(admin)
    .registerWorkflow(BUILDING_PERMIT, id("passkeys"), VALIDITY_SECONDS, [
      stage({ departments: ["FIRE"] }),
      stage({ departments: ["SOLO"] }),
      stage({ departments: ["A"] }),
    ]);
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  for (const [i, hash] of DOCUMENTS.entries()) {
    await documents.connect(operator).anchorDocument(1n, uuid(i + 1), code(`DOC_${i}`), hash);
  }
  await registry.connect(operator).submit(1n);

  const ids = { A: 1n, FIRE: 2n, SOLO: 3n };
  return {
    registry,
    token,
    domain,
    fire: fire as unknown as DepartmentPasskeyAccount,
    solo: solo as unknown as DepartmentPasskeyAccount,
    reviewers,
    soloReviewer,
    ids,
    deployer,
    admin,
    operator,
    keeper,
    relayer,
    custodialA,
  };
}

type Platform = Awaited<ReturnType<typeof deployPasskeyDepartments>>;

/** The decision department `departmentId` has in front of it on token 1 now (approve every document). */
async function decisionNow(p: Platform, departmentId: bigint, fields: Partial<DecisionFields> = {}) {
  const progress = await p.registry.progressOf(1n);
  const { nonce } = await p.registry.departmentRecord(departmentId);
  const now = BigInt((await ethers.provider.getBlock("latest"))!.timestamp);
  return {
    tokenId: 1n,
    departmentId,
    stage: progress.stage,
    round: progress.stageStartedAt,
    decision: Decision.Approved,
    reasonCode: 0,
    reviewedMask: 0,
    documents: DOCUMENTS,
    remarksHash: ZeroHash,
    nonce,
    deadline: now + 3600n,
    ...fields,
  } satisfies DecisionFields;
}

const digestOf = (p: Platform, decision: DecisionFields) => TypedDataEncoder.hash(p.domain, DECISION_TYPES, decision);

async function changeDomain(account: DepartmentPasskeyAccount) {
  const [, name, version, chainId, verifyingContract] = await account.eip712Domain();
  return { name, version, chainId, verifyingContract };
}

/** A change of `account`'s reviewers with its next nonce and a deadline an hour ahead, and its digest. */
async function changeOf(account: DepartmentPasskeyAccount, fields: Partial<Change> & { threshold: number }) {
  const now = BigInt((await ethers.provider.getBlock("latest"))!.timestamp);
  const change: Change = { add: [], remove: [], nonce: await account.changeNonce(), deadline: now + 3600n, ...fields };
  return { change, digest: TypedDataEncoder.hash(await changeDomain(account), CHANGE_TYPES, change) };
}

describe("DepartmentPasskeyAccount", function () {
  // P-256 in Solidity on the simulated chain: a few hundred milliseconds per verification.
  this.timeout(120_000);

  describe("deployment", function () {
    it("holds its reviewers' passkeys and threshold, announced by events", async function () {
      const keys = [createPasskey(), createPasskey()].map((p) => p.key);
      const account = await ethers.deployContract("DepartmentPasskeyAccount", [keys, 2]);
      const receipt = await account.deploymentTransaction()!.wait();
      const events = receipt!.logs.map((log) => account.interface.parseLog(log)!);
      expect(events.map((e) => e.name)).to.deep.equal(["ReviewerAdded", "ReviewerAdded", "ThresholdSet"]);
      expect(events[0].args.reviewerId).to.equal(keccak256(keys[0]));
      expect(events[0].args.key).to.equal(keys[0]);
      expect([...events[2].args]).to.deep.equal([0n, 2n]);
      expect([...(await account.reviewers())]).to.deep.equal(keys);
      expect(await account.threshold()).to.equal(2n);
      expect(await account.isReviewer(keys[1])).to.equal(true);
      expect(await account.changeNonce()).to.equal(0n);
    });

    it("refuses a key that is not a P-256 point, a duplicate key and an unreachable or zero threshold", async function () {
      const factory = await ethers.getContractFactory("DepartmentPasskeyAccount");
      const [a, b] = [createPasskey(), createPasskey()].map((p) => p.key);
      const offCurve = "0x" + "01".repeat(64);
      await expect(factory.deploy([a, offCurve], 1))
        .to.be.revertedWithCustomError(factory, "PasskeyInvalidKey")
        .withArgs(offCurve);
      await expect(factory.deploy([a, a.slice(0, -2)], 1))
        .to.be.revertedWithCustomError(factory, "PasskeyInvalidKey")
        .withArgs(a.slice(0, -2));
      await expect(factory.deploy([a, a], 1))
        .to.be.revertedWithCustomError(factory, "PasskeyReviewerExists")
        .withArgs(a);
      await expect(factory.deploy([a, b], 0))
        .to.be.revertedWithCustomError(factory, "PasskeyInvalidThreshold")
        .withArgs(0, 2);
      await expect(factory.deploy([a, b], 3))
        .to.be.revertedWithCustomError(factory, "PasskeyInvalidThreshold")
        .withArgs(3, 2);
    });
  });

  describe("a passkey department deciding through decideBySig", function () {
    it("records a decision two of its three reviewers signed, relayed by anyone, with the account as signer", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const decision = await decisionNow(p, p.ids.FIRE);
      const signature = signWithPasskeys(digestOf(p, decision), [p.reviewers[0], p.reviewers[2]]);
      await expect(p.registry.connect(p.relayer).decideBySig(decision, signature))
        .to.emit(p.registry, "DecisionRecorded")
        .withArgs(
          1n,
          p.ids.FIRE,
          0,
          Decision.Approved,
          0,
          0b111,
          (v: bigint) => v > 0n,
          ZeroHash,
          await p.fire.getAddress(),
          Custody.DepartmentHeld,
        );
      expect((await p.registry.progressOf(1n)).stage).to.equal(1n);
    });

    it("refuses one reviewer's assertion where two are needed (ReviewInvalidSignature), nothing recorded", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const decision = await decisionNow(p, p.ids.FIRE);
      const signature = signWithPasskeys(digestOf(p, decision), [p.reviewers[1]]);
      expect(await p.fire.isValidSignature(digestOf(p, decision), signature)).to.equal(INVALID);
      await expect(p.registry.connect(p.relayer).decideBySig(decision, signature))
        .to.be.revertedWithCustomError(p.registry, "ReviewInvalidSignature")
        .withArgs(p.ids.FIRE, await p.fire.getAddress());
      expect((await p.registry.departmentRecord(p.ids.FIRE)).nonce).to.equal(0n);
    });

    it("refuses the same reviewer counted twice, and keys out of reviewerId order", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const decision = await decisionNow(p, p.ids.FIRE);
      const digest = digestOf(p, decision);
      const [first, second] = byReviewerId(p.reviewers.slice(0, 2));
      const twice = encodeApprovals([
        { key: first.key, assertion: assert(first, digest) },
        { key: first.key, assertion: assert(first, digest, { signCount: 2 }) },
      ]);
      const reversed = encodeApprovals([
        { key: second.key, assertion: assert(second, digest) },
        { key: first.key, assertion: assert(first, digest) },
      ]);
      for (const signature of [twice, reversed]) {
        expect(await p.fire.isValidSignature(digest, signature)).to.equal(INVALID);
        await expect(p.registry.decideBySig(decision, signature)).to.be.revertedWithCustomError(
          p.registry,
          "ReviewInvalidSignature",
        );
      }
      const sorted = encodeApprovals([first, second].map((r) => ({ key: r.key, assertion: assert(r, digest) })));
      expect(await p.fire.isValidSignature(digest, sorted)).to.equal(MAGIC);
    });

    it("refuses assertions over another decision (other remarks, other documents reviewed)", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const shown = await decisionNow(p, p.ids.FIRE);
      const signature = signWithPasskeys(digestOf(p, shown), p.reviewers.slice(0, 2));
      for (const sent of [
        { ...shown, remarksHash: id("other remarks") },
        { ...shown, reviewedMask: 0b1, documents: DOCUMENTS.slice(0, 1) },
        { ...shown, decision: Decision.ChangesRequested },
      ]) {
        await expect(p.registry.decideBySig(sent, signature))
          .to.be.revertedWithCustomError(p.registry, "ReviewInvalidSignature")
          .withArgs(p.ids.FIRE, await p.fire.getAddress());
      }
    });

    it("refuses an assertion replayed after resubmission, as sent or moved to the new round and nonce", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const first = await decisionNow(p, p.ids.FIRE, { decision: Decision.ChangesRequested });
      const signature = signWithPasskeys(digestOf(p, first), p.reviewers.slice(0, 2));
      await p.registry.connect(p.relayer).decideBySig(first, signature);
      await networkHelpers.time.increase(60);
      await p.registry.connect(p.operator).resubmit(1n);

      await expect(p.registry.decideBySig(first, signature))
        .to.be.revertedWithCustomError(p.registry, "ReviewInvalidNonce")
        .withArgs(p.ids.FIRE, 1n, 0n);
      const moved = await decisionNow(p, p.ids.FIRE, { decision: Decision.ChangesRequested });
      expect(moved.round).to.not.equal(first.round);
      await expect(p.registry.decideBySig(moved, signature))
        .to.be.revertedWithCustomError(p.registry, "ReviewInvalidSignature")
        .withArgs(p.ids.FIRE, await p.fire.getAddress());
    });

    it("refuses assertions of the wrong type, without user verification or presence, with a high s or by a stranger", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const decision = await decisionNow(p, p.ids.FIRE);
      const digest = digestOf(p, decision);
      const [good, other] = p.reviewers;
      const refused = {
        "clientDataJSON of a registration (webauthn.create)": signWithPasskeys(digest, [good, other], {
          type: "webauthn.create",
        }),
        "no user verification (UV clear)": signWithPasskeys(digest, [good, other], { flags: FLAG_UP }),
        "no user presence (UP clear)": signWithPasskeys(digest, [good, other], { flags: FLAG_UV }),
        "backed up but not backup eligible": signWithPasskeys(digest, [good, other], {
          flags: FLAG_UP | FLAG_UV | FLAG_BS,
        }),
        "the high-s twin of each signature": signWithPasskeys(digest, [good, other], { highS: true }),
        "a passkey that is not a reviewer's": signWithPasskeys(digest, [good, createPasskey()]),
        "a reviewer's key with another passkey's assertion": encodeApprovals(
          byReviewerId([good, other]).map((r) => ({ key: r.key, assertion: assert(createPasskey(), digest) })),
        ),
        "a malformed signature": "0x1234",
      };
      for (const [what, signature] of Object.entries(refused)) {
        expect(await p.fire.isValidSignature(digest, signature), what).to.equal(INVALID);
        await expect(p.registry.decideBySig(decision, signature), what)
          .to.be.revertedWithCustomError(p.registry, "ReviewInvalidSignature")
          .withArgs(p.ids.FIRE, await p.fire.getAddress());
      }
      // The same reviewers, user verified, for another origin and RP ID: accepted (the browser checks those).
      expect(
        await p.fire.isValidSignature(digest, signWithPasskeys(digest, [good, other], { rpId: "other.example" })),
      ).to.equal(MAGIC);
    });

    it("refuses a removed reviewer's passkey", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const [kept, alsoKept, removed] = p.reviewers;
      const { change, digest } = await changeOf(p.fire, { remove: [removed.key], threshold: 2 });
      await p.fire.connect(p.relayer).changeReviewers(change, signWithPasskeys(digest, [kept, alsoKept]));

      const decision = await decisionNow(p, p.ids.FIRE);
      await expect(p.registry.decideBySig(decision, signWithPasskeys(digestOf(p, decision), [kept, removed])))
        .to.be.revertedWithCustomError(p.registry, "ReviewInvalidSignature")
        .withArgs(p.ids.FIRE, await p.fire.getAddress());
      await expect(p.registry.decideBySig(decision, signWithPasskeys(digestOf(p, decision), [kept, alsoKept]))).to.emit(
        p.registry,
        "DecisionRecorded",
      );
    });
  });

  describe("keys the platform holds", function () {
    it("cannot make a decision for a passkey department: operator, administration, governance, a custodial wallet", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const decision = await decisionNow(p, p.ids.FIRE);
      const fire = await p.fire.getAddress();
      for (const key of [p.deployer, p.admin, p.operator, p.keeper, p.custodialA]) {
        const signature = await key.signTypedData(p.domain, DECISION_TYPES, decision);
        expect(await p.fire.isValidSignature(digestOf(p, decision), signature)).to.equal(INVALID);
        await expect(p.registry.connect(key).decideBySig(decision, signature))
          .to.be.revertedWithCustomError(p.registry, "ReviewInvalidSignature")
          .withArgs(p.ids.FIRE, fire);
        await expect(p.registry.connect(key).decide(decision))
          .to.be.revertedWithCustomError(p.registry, "NotADepartment")
          .withArgs(key.address);
      }
    });

    it("cannot change the reviewer set: the account has no owner, its one state-changing function needs its reviewers", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const writes: string[] = [];
      p.fire.interface.forEachFunction((f) => {
        if (!f.constant) writes.push(f.name);
      });
      expect(writes).to.deep.equal(["changeReviewers"]);

      const planted = createPasskey();
      const { change, digest } = await changeOf(p.fire, { add: [planted.key], threshold: 1 });
      for (const key of [p.deployer, p.admin, p.operator, p.custodialA]) {
        const signature = await key.signTypedData(await changeDomain(p.fire), CHANGE_TYPES, change);
        await expect(p.fire.connect(key).changeReviewers(change, signature))
          .to.be.revertedWithCustomError(p.fire, "PasskeyChangeUnauthorized")
          .withArgs(digest);
      }
      // The planted passkey with one reviewer it might have phished: still one short of the threshold.
      await expect(
        p.fire.changeReviewers(change, signWithPasskeys(digest, [p.reviewers[0]])),
      ).to.be.revertedWithCustomError(p.fire, "PasskeyChangeUnauthorized");
      expect(await p.fire.isReviewer(planted.key)).to.equal(false);
    });
  });

  describe("changeReviewers", function () {
    it("adds a reviewer and raises the threshold with two current reviewers' assertions, relayed by anyone", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const added = createPasskey();
      const { change, digest } = await changeOf(p.fire, { add: [added.key], threshold: 3 });
      expect(await p.fire.changeDigest(change)).to.equal(digest);
      await expect(p.fire.connect(p.relayer).changeReviewers(change, signWithPasskeys(digest, p.reviewers.slice(1))))
        .to.emit(p.fire, "ReviewerAdded")
        .withArgs(keccak256(added.key), added.key)
        .and.to.emit(p.fire, "ThresholdSet")
        .withArgs(2, 3)
        .and.to.emit(p.fire, "ReviewerChangeApplied")
        .withArgs(0n, digest, p.relayer.address);
      expect(await p.fire.reviewers()).to.have.length(4);
      expect(await p.fire.threshold()).to.equal(3n);
      expect(await p.fire.changeNonce()).to.equal(1n);

      const decision = await decisionNow(p, p.ids.FIRE);
      const twoOfFour = signWithPasskeys(digestOf(p, decision), [added, p.reviewers[0]]);
      expect(await p.fire.isValidSignature(digestOf(p, decision), twoOfFour)).to.equal(INVALID);
      const threeOfFour = signWithPasskeys(digestOf(p, decision), [added, ...p.reviewers.slice(0, 2)]);
      await expect(p.registry.decideBySig(decision, threeOfFour)).to.emit(p.registry, "DecisionRecorded");
    });

    it("replaces a lost passkey in one change (remove, add, same threshold)", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const [lost, a, b] = p.reviewers;
      const replacement = createPasskey();
      const { change, digest } = await changeOf(p.fire, { remove: [lost.key], add: [replacement.key], threshold: 2 });
      await expect(p.fire.changeReviewers(change, signWithPasskeys(digest, [a, b])))
        .to.emit(p.fire, "ReviewerRemoved")
        .withArgs(keccak256(lost.key), lost.key)
        .and.to.emit(p.fire, "ReviewerAdded")
        .withArgs(keccak256(replacement.key), replacement.key)
        .and.not.to.emit(p.fire, "ThresholdSet");
      expect([...(await p.fire.reviewers())].sort()).to.deep.equal([replacement.key, a.key, b.key].sort());
    });

    it("refuses a change one reviewer signed (PasskeyChangeUnauthorized with the digest)", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const { change, digest } = await changeOf(p.fire, { threshold: 1 });
      await expect(p.fire.changeReviewers(change, signWithPasskeys(digest, [p.reviewers[0]])))
        .to.be.revertedWithCustomError(p.fire, "PasskeyChangeUnauthorized")
        .withArgs(digest);
      expect(await p.fire.threshold()).to.equal(2n);
    });

    it("applies a change once: its nonce is spent (PasskeyChangeInvalidNonce)", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const { change, digest } = await changeOf(p.fire, { threshold: 1 });
      const signature = signWithPasskeys(digest, p.reviewers.slice(0, 2));
      await p.fire.changeReviewers(change, signature);
      // Back to two, then the first change replayed: it would lower the threshold again.
      const raise = await changeOf(p.fire, { threshold: 2 });
      await p.fire.changeReviewers(raise.change, signWithPasskeys(raise.digest, [p.reviewers[0]]));
      await expect(p.fire.changeReviewers(change, signature))
        .to.be.revertedWithCustomError(p.fire, "PasskeyChangeInvalidNonce")
        .withArgs(2n, 0n);
      expect(await p.fire.threshold()).to.equal(2n);
    });

    it("refuses a change after its deadline (PasskeyChangeExpired)", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const { change, digest } = await changeOf(p.fire, { threshold: 1 });
      const signature = signWithPasskeys(digest, p.reviewers.slice(0, 2));
      await networkHelpers.time.increaseTo(change.deadline + 1n);
      await expect(p.fire.changeReviewers(change, signature))
        .to.be.revertedWithCustomError(p.fire, "PasskeyChangeExpired")
        .withArgs(change.deadline);
    });

    it("refuses a change signed for another account with the same reviewers (its domain names the account)", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const twin = (await ethers.deployContract("DepartmentPasskeyAccount", [
        p.reviewers.map((r) => r.key),
        2,
      ])) as unknown as DepartmentPasskeyAccount;
      const { change, digest } = await changeOf(twin, { threshold: 1 });
      const signature = signWithPasskeys(digest, p.reviewers.slice(0, 2));
      await expect(p.fire.changeReviewers(change, signature))
        .to.be.revertedWithCustomError(p.fire, "PasskeyChangeUnauthorized")
        .withArgs(await p.fire.changeDigest(change));
      await expect(twin.changeReviewers(change, signature)).to.emit(twin, "ThresholdSet").withArgs(2, 1);
    });

    it("refuses a change that would leave the threshold unreachable, or removes a key that is not a reviewer", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const stranger = createPasskey();
      const unreachable = await changeOf(p.fire, { remove: [p.reviewers[2].key, p.reviewers[1].key], threshold: 2 });
      await expect(
        p.fire.changeReviewers(unreachable.change, signWithPasskeys(unreachable.digest, p.reviewers.slice(0, 2))),
      )
        .to.be.revertedWithCustomError(p.fire, "PasskeyInvalidThreshold")
        .withArgs(2, 1);
      const unknown = await changeOf(p.fire, { remove: [stranger.key], threshold: 2 });
      await expect(p.fire.changeReviewers(unknown.change, signWithPasskeys(unknown.digest, p.reviewers.slice(0, 2))))
        .to.be.revertedWithCustomError(p.fire, "PasskeyReviewerUnknown")
        .withArgs(stranger.key);
      expect(await p.fire.changeNonce()).to.equal(0n);
    });
  });

  describe("gas on London (no P-256 precompile)", function () {
    /** 21,000 + calldata (16 per non-zero byte, 4 per zero byte): what a transaction pays before it executes. */
    const intrinsic = (data: string) => getBytes(data).reduce((gas, byte) => gas + (byte === 0 ? 4n : 16n), 21_000n);

    it("measures decideBySig for 1-of-1 and 2-of-3 passkey departments, isValidSignature alone and a reviewer change", async function () {
      const p = await networkHelpers.loadFixture(deployPasskeyDepartments);
      const rows: [string, string][] = [];
      const gas = (what: string, used: bigint, data?: string) =>
        rows.push([what, data ? `${used} (execution ${used - intrinsic(data)})` : `${used}`]);
      /** gasUsed of `data` sent to `to` as a transaction (a view function runs the same code as in a call). */
      const gasOfCall = async (to: string, data: string) =>
        (await (await p.relayer.sendTransaction({ to, data })).wait())!.gasUsed;
      /** Wall time of one eth_call on the simulated chain, mean of `n`. */
      const timeOfCall = async (to: string, data: string, n = 20) => {
        await ethers.provider.call({ to, data });
        const started = performance.now();
        for (let i = 0; i < n; i++) await ethers.provider.call({ to, data });
        return (performance.now() - started) / n;
      };

      const solo = await p.solo.getAddress();
      const soloDecision = await decisionNow(p, p.ids.SOLO);
      const soloDigest = digestOf(p, soloDecision);
      const oneOfOne = signWithPasskeys(soloDigest, [p.soloReviewer]);
      const highS = signWithPasskeys(soloDigest, [p.soloReviewer], { highS: true });
      const callOne = p.solo.interface.encodeFunctionData("isValidSignature", [soloDigest, oneOfOne]);
      const callHighS = p.solo.interface.encodeFunctionData("isValidSignature", [soloDigest, highS]);
      expect(await ethers.provider.call({ to: solo, data: callOne })).to.match(new RegExp(`^${MAGIC}`));
      const fullGas = await gasOfCall(solo, callOne);
      const parsingGas = await gasOfCall(solo, callHighS);
      gas("isValidSignature, 1 assertion", fullGas, callOne);
      gas(
        "isValidSignature, 1 assertion refused by P256 before the curve (high s): all but the P-256 math",
        parsingGas,
        callHighS,
      );
      rows.push([
        "P-256 verification in Solidity (difference)",
        `${fullGas - parsingGas - (intrinsic(callOne) - intrinsic(callHighS))}`,
      ]);

      const fire = await p.fire.getAddress();
      const fireDecision = await decisionNow(p, p.ids.FIRE);
      const fireDigest = digestOf(p, fireDecision);
      const twoOfThree = signWithPasskeys(fireDigest, p.reviewers.slice(0, 2));
      const callTwo = p.fire.interface.encodeFunctionData("isValidSignature", [fireDigest, twoOfThree]);
      gas("isValidSignature, 2 assertions", await gasOfCall(fire, callTwo), callTwo);

      const fireTx = await p.registry.connect(p.relayer).decideBySig(fireDecision, twoOfThree);
      gas("decideBySig, 2-of-3 passkey department", (await fireTx.wait())!.gasUsed, fireTx.data);
      // SOLO's turn now (stage 1): its decision names the new stage and round.
      const soloNow = await decisionNow(p, p.ids.SOLO);
      const soloTx = await p.registry
        .connect(p.relayer)
        .decideBySig(soloNow, signWithPasskeys(digestOf(p, soloNow), [p.soloReviewer]));
      gas("decideBySig, 1-of-1 passkey department", (await soloTx.wait())!.gasUsed, soloTx.data);
      const aDecision = await decisionNow(p, p.ids.A);
      const aTx = await p.registry
        .connect(p.relayer)
        .decideBySig(aDecision, await p.custodialA.signTypedData(p.domain, DECISION_TYPES, aDecision));
      gas("decideBySig, EOA key (ECDSA), for comparison", (await aTx.wait())!.gasUsed, aTx.data);

      const { change, digest } = await changeOf(p.fire, { add: [createPasskey().key], threshold: 2 });
      const changeTx = await p.fire
        .connect(p.relayer)
        .changeReviewers(change, signWithPasskeys(digest, p.reviewers.slice(0, 2)));
      gas("changeReviewers: add a reviewer, 2 assertions", (await changeTx.wait())!.gasUsed, changeTx.data);

      const full = await timeOfCall(solo, callOne);
      const parsing = await timeOfCall(solo, callHighS);
      rows.push([
        "wall time per eth_call of isValidSignature, 1 assertion / high s (EDR, in process)",
        `${full.toFixed(2)} / ${parsing.toFixed(2)} ms: P-256 ≈ ${(full - parsing).toFixed(2)} ms`,
      ]);

      console.log(
        "\n      London (hardhat network 'london', OpenZeppelin P256 in Solidity); gas incl. 21,000 + calldata:",
      );
      for (const [what, value] of rows) console.log(`        ${what}: ${value}`);
      expect(fullGas - parsingGas).to.be.greaterThan(200_000n);
    });
  });
});
