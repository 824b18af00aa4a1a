import { expect } from "chai";
import type { Signer, TypedDataDomain } from "ethers";
import {
  BUILDING_PERMIT,
  code,
  COMMITMENT,
  Custody,
  Decision,
  deployPlatform,
  ethers,
  Execution,
  loadFixture,
  networkHelpers,
  Phase,
  sha,
  stage,
  Status,
  uuid,
  VALIDITY_SECONDS,
  WALLET_DELAY,
  decisionFor,
  domainOf,
  keyProof,
  type DecisionFields,
} from "./helpers/fixtures.ts";

// Decisions a department signs (EIP-712) and anyone relays: ApprovalRegistry.decideBySig, checked through the
// DecisionVerifier (ECDSA for an externally owned wallet, EIP-1271 for a contract wallet).

const REMARKS = ethers.id("signed remarks");
const ID = { A: 1n, G: 7n, H: 8n } as const;
const HOUR = 3600n;

/** The EIP-712 type of a decision, as IApprovalRegistry.Decision documents it (written here, not generated). */
const DECISION_TYPES = {
  Decision: [
    { name: "tokenId", type: "uint256" },
    { name: "departmentId", type: "uint16" },
    { name: "stage", type: "uint8" },
    { name: "round", type: "uint40" },
    { name: "decision", type: "uint8" },
    { name: "reasonCode", type: "uint8" },
    { name: "reviewedMask", type: "uint16" },
    { name: "documents", type: "bytes32[]" },
    { name: "remarksHash", type: "bytes32" },
    { name: "nonce", type: "uint64" },
    { name: "deadline", type: "uint64" },
  ],
};

type SignedDecision = DecisionFields;

/**
 * Departments G (an externally owned wallet the department holds) and H (a 2-of-3 EIP-1271 owners wallet standing
 * in for a Safe), both department-held, with custodial A in one PARALLEL ALL stage [G, H, A]; token 1 minted with
 * three documents and submitted.
 */
async function deploySignedDecisionRequest() {
  const platform = await deployPlatform();
  const { token, documents, registry, admin, operator, applicant, signers } = platform;
  const holder = signers[12];
  const owners = [signers[13], signers[14], signers[15]].sort((a, b) =>
    BigInt(a.address) < BigInt(b.address) ? -1 : 1,
  );
  const multisig = await ethers.deployContract("OwnersWallet", [owners.map((o) => o.address), 2n]);
  await registry.connect(admin).registerDepartment(code("G"), holder.address, Custody.DepartmentHeld);
  const multisigAddress = await multisig.getAddress();
  // The multisig proves its key as it signs anything: two owners' signatures of the DepartmentKey digest.
  const multisigProof = ethers.concat(
    await Promise.all(
      owners.slice(0, 2).map((owner) => keyProof(registry, owner, code("H"), multisigAddress, Custody.DepartmentHeld)),
    ),
  );
  await registry.connect(admin).registerDepartment(code("H"), multisigAddress, Custody.DepartmentHeld, multisigProof);
  await registry
    .connect(admin)
    .registerWorkflow(BUILDING_PERMIT, ethers.id("signed"), VALIDITY_SECONDS, [
      stage({ executionType: Execution.Parallel, departments: ["G", "H", "A"] }),
    ]);
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  for (let i = 0; i < 3; i++) {
    await documents.connect(operator).anchorDocument(1n, uuid(i + 1), code(`DOC_${i}`), sha(`doc-${i}-v1`));
  }
  await registry.connect(operator).submit(1n);
  const domain: TypedDataDomain = await domainOf(registry);
  return { ...platform, holder, owners, multisig, domain };
}

type Fixture = Awaited<ReturnType<typeof deploySignedDecisionRequest>>;

/** A decision on token 1 by `departmentId` in the current stage and round, on the latest documents, with the
 * department's next nonce, valid for an hour (overrides apply). */
async function decisionOf(fixture: Fixture, departmentId: bigint, overrides: Partial<SignedDecision> = {}) {
  return decisionFor(fixture.registry, departmentId, 1n, {
    decision: Decision.Approved,
    remarksHash: REMARKS,
    deadline: BigInt(await networkHelpers.time.latest()) + HOUR,
    ...overrides,
  });
}

/** The signature of `signer` over the typed decision (ethers' signTypedData: the TypeScript shape under test). */
function sign(signer: Signer, domain: TypedDataDomain, decision: SignedDecision) {
  return signer.signTypedData(domain, DECISION_TYPES, decision);
}

/** An EIP-1271 signature of the owners wallet: the owners' signatures concatenated in ascending address order. */
async function multisign(owners: Signer[], domain: TypedDataDomain, decision: SignedDecision) {
  return ethers.concat(await Promise.all(owners.map((owner) => sign(owner, domain, decision))));
}

describe("ApprovalRegistry", function () {
  describe("decideBySig", function () {
    it("records a decision signed by the department's wallet and relayed by a third party, with signer and custody", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, holder, stranger, domain, documents } = fixture;
      const decision = await decisionOf(fixture, ID.G, { reviewedMask: 0b101n });
      const signature = await sign(holder, domain, decision);
      await expect(registry.connect(stranger).decideBySig(decision, signature))
        .to.emit(registry, "DecisionRecorded")
        .withArgs(
          1n,
          ID.G,
          0,
          Decision.Approved,
          0,
          0b101,
          await documents.packedDocumentsOf(1n),
          REMARKS,
          holder.address,
          Custody.DepartmentHeld,
        );
      expect((await registry.departmentRecord(ID.G)).nonce).to.equal(1n);
      expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([
        Decision.Approved,
        Decision.Pending,
        Decision.Pending,
      ]);
    });

    it("hashes the decision exactly as ethers' typed data does", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, verifier, domain } = fixture;
      const decision = await decisionOf(fixture, ID.G, { reasonCode: 3n, decision: Decision.Rejected, nonce: 5n });
      expect(await verifier.decisionDigest(decision, ethers.TypedDataEncoder.hashDomain(domain))).to.equal(
        ethers.TypedDataEncoder.hash(domain, DECISION_TYPES, decision),
      );
    });

    it("records a signed request for changes and a signed rejection with their effects", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { token, registry, operator, holder, stranger, domain } = fixture;
      const changes = await decisionOf(fixture, ID.G, { decision: Decision.ChangesRequested });
      await expect(registry.connect(stranger).decideBySig(changes, await sign(holder, domain, changes)))
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Submitted, Status.PendingResubmission, 0, await registry.getAddress());
      await registry.connect(operator).resubmit(1n);
      const rejection = await decisionOf(fixture, ID.G, { decision: Decision.Rejected, reasonCode: 2n, nonce: 1n });
      await expect(registry.connect(stranger).decideBySig(rejection, await sign(holder, domain, rejection)))
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Submitted, Status.Rejected, 2, await registry.getAddress());
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
    });

    it("accepts a custodial department's signature too, recording its custody", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, departments, admin, domain, documents } = fixture;
      const decision = await decisionOf(fixture, ID.A);
      await expect(registry.connect(admin).decideBySig(decision, await sign(departments.A, domain, decision)))
        .to.emit(registry, "DecisionRecorded")
        .withArgs(
          1n,
          ID.A,
          0,
          Decision.Approved,
          0,
          0b111,
          await documents.packedDocumentsOf(1n),
          REMARKS,
          departments.A.address,
          Custody.Custodial,
        );
    });

    it("issues the licence when the signed decisions complete the last stage", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { token, registry, departments, holder, owners, stranger, domain } = fixture;
      const g = await decisionOf(fixture, ID.G);
      await registry.connect(stranger).decideBySig(g, await sign(holder, domain, g));
      const h = await decisionOf(fixture, ID.H);
      await registry.connect(stranger).decideBySig(h, await multisign(owners.slice(0, 2), domain, h));
      const a = await decisionOf(fixture, ID.A);
      await expect(registry.connect(stranger).decideBySig(a, await sign(departments.A, domain, a))).to.emit(
        token,
        "LicenceIssued",
      );
      expect((await token.licence(1n)).status).to.equal(Status.Approved);
    });

    it("reverts with ReviewInvalidNonce when the signature is replayed", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, operator, holder, stranger, domain } = fixture;
      const changes = await decisionOf(fixture, ID.G, { decision: Decision.ChangesRequested });
      const signature = await sign(holder, domain, changes);
      await registry.connect(stranger).decideBySig(changes, signature);
      await registry.connect(operator).resubmit(1n);
      // The department may decide again, but not with the same signature.
      await expect(registry.connect(stranger).decideBySig(changes, signature))
        .to.be.revertedWithCustomError(registry, "ReviewInvalidNonce")
        .withArgs(ID.G, 1n, 0n);
    });

    it("reverts with ReviewInvalidNonce when the nonce is not the department's next one", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, holder, stranger, domain } = fixture;
      const decision = await decisionOf(fixture, ID.G, { nonce: 1n });
      await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, domain, decision)))
        .to.be.revertedWithCustomError(registry, "ReviewInvalidNonce")
        .withArgs(ID.G, 0n, 1n);
    });

    describe("when the signer is not the department's wallet", function () {
      it("reverts with ReviewInvalidSignature (another key, another department's key, an administrator)", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, admin, operator, departments, holder, stranger, domain } = fixture;
        const decision = await decisionOf(fixture, ID.G);
        for (const signer of [stranger, departments.A, admin, operator]) {
          await expect(registry.connect(operator).decideBySig(decision, await sign(signer, domain, decision)))
            .to.be.revertedWithCustomError(registry, "ReviewInvalidSignature")
            .withArgs(ID.G, holder.address);
        }
        expect((await registry.departmentRecord(ID.G)).nonce).to.equal(0n);
      });

      it("reverts with ReviewInvalidSignature when a signed field was changed", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, holder, stranger, domain } = fixture;
        const decision = await decisionOf(fixture, ID.G, { decision: Decision.ChangesRequested });
        const signature = await sign(holder, domain, decision);
        const tampered = [
          { ...decision, decision: Decision.Approved },
          { ...decision, reviewedMask: 0b001n },
          { ...decision, remarksHash: ethers.id("other remarks") },
          { ...decision, deadline: BigInt(decision.deadline) + 1n },
          { ...decision, departmentId: ID.A },
        ];
        for (const changed of tampered) {
          const wallet = changed.departmentId === ID.A ? fixture.departments.A.address : holder.address;
          await expect(registry.connect(stranger).decideBySig(changed, signature))
            .to.be.revertedWithCustomError(registry, "ReviewInvalidSignature")
            .withArgs(changed.departmentId, wallet);
        }
      });

      it("reverts with ReviewInvalidSignature for a signature made for another registry, chain, version or deployment", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, holder, stranger, domain } = fixture;
        const decision = await decisionOf(fixture, ID.G);
        for (const other of [
          { ...domain, verifyingContract: stranger.address },
          { ...domain, chainId: 1n },
          { ...domain, version: "1" },
          // Another deployment of the same registry at the same address on a chain with the same id: only the
          // per-deployment salt differs, and it is enough.
          { ...domain, salt: ethers.id("another deployment") },
        ]) {
          await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, other, decision)))
            .to.be.revertedWithCustomError(registry, "ReviewInvalidSignature")
            .withArgs(ID.G, holder.address);
        }
      });

      it("reverts with ReviewInvalidSignature for a malformed signature", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, holder, stranger, domain } = fixture;
        const decision = await decisionOf(fixture, ID.G);
        const signature = await sign(holder, domain, decision);
        for (const bad of ["0x", ethers.dataSlice(signature, 0, 64), signature + "00"]) {
          await expect(registry.connect(stranger).decideBySig(decision, bad))
            .to.be.revertedWithCustomError(registry, "ReviewInvalidSignature")
            .withArgs(ID.G, holder.address);
        }
      });

      it("reverts with ReviewInvalidSignature for the department's previous wallet after a wallet change", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, admin, holder, stranger, signers, domain } = fixture;
        const next = signers[16];
        await registry.connect(admin).proposeDepartmentWallet(code("G"), next.address, Custody.DepartmentHeld);
        await networkHelpers.time.increase(WALLET_DELAY);
        await registry.activateDepartmentWallet(code("G"));
        const decision = await decisionOf(fixture, ID.G);
        await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, domain, decision)))
          .to.be.revertedWithCustomError(registry, "ReviewInvalidSignature")
          .withArgs(ID.G, next.address);
        await expect(registry.connect(stranger).decideBySig(decision, await sign(next, domain, decision))).to.emit(
          registry,
          "DecisionRecorded",
        );
      });
    });

    describe("when the deadline has passed", function () {
      it("reverts with ReviewSignatureExpired one second after the deadline", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, holder, stranger, domain } = fixture;
        const deadline = BigInt(await networkHelpers.time.latest()) + 10n;
        const decision = await decisionOf(fixture, ID.G, { deadline });
        const signature = await sign(holder, domain, decision);
        await networkHelpers.time.setNextBlockTimestamp(deadline + 1n);
        await expect(registry.connect(stranger).decideBySig(decision, signature))
          .to.be.revertedWithCustomError(registry, "ReviewSignatureExpired")
          .withArgs(deadline);
      });

      it("accepts the signature in the block at its deadline", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, holder, stranger, domain } = fixture;
        const deadline = BigInt(await networkHelpers.time.latest()) + 10n;
        const decision = await decisionOf(fixture, ID.G, { deadline });
        await networkHelpers.time.setNextBlockTimestamp(deadline);
        await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, domain, decision))).to.emit(
          registry,
          "DecisionRecorded",
        );
      });
    });

    it("reverts with ReviewStaleDocuments when a reviewed document changed after the department signed", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, documents, operator, holder, stranger, domain } = fixture;
      const decision = await decisionOf(fixture, ID.G);
      const signature = await sign(holder, domain, decision);
      await documents.connect(operator).anchorVersion(1n, sha("doc-2-v1"), sha("doc-2-v2"));
      await expect(registry.connect(stranger).decideBySig(decision, signature))
        .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
        .withArgs(1n, 2, sha("doc-2-v1"));
      expect((await registry.departmentRecord(ID.G)).nonce).to.equal(0n);
    });

    it("reverts with ReviewInvalidDecision when the decision is not Approved, Rejected or ChangesRequested", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, holder, stranger, domain } = fixture;
      for (const status of [Decision.Pending, Decision.ReviewRequired]) {
        const decision = await decisionOf(fixture, ID.G, { decision: status });
        await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, domain, decision)))
          .to.be.revertedWithCustomError(registry, "ReviewInvalidDecision")
          .withArgs(status);
      }
    });

    it("reverts with ReviewInvalidReason when the rejection reason is not 1..5", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, holder, stranger, domain } = fixture;
      for (const reasonCode of [0n, 6n]) {
        const decision = await decisionOf(fixture, ID.G, { decision: Decision.Rejected, reasonCode });
        await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, domain, decision)))
          .to.be.revertedWithCustomError(registry, "ReviewInvalidReason")
          .withArgs(reasonCode);
      }
    });

    it("reverts with DepartmentUnknownId and DepartmentInactive when the department is unknown or inactive", async function () {
      const fixture = await loadFixture(deploySignedDecisionRequest);
      const { registry, admin, holder, stranger, domain } = fixture;
      const unknown = await decisionOf(fixture, 99n);
      await expect(registry.connect(stranger).decideBySig(unknown, await sign(holder, domain, unknown)))
        .to.be.revertedWithCustomError(registry, "DepartmentUnknownId")
        .withArgs(99n);
      await registry.connect(admin).setDepartmentActive(code("G"), false);
      const decision = await decisionOf(fixture, ID.G);
      await expect(registry.connect(stranger).decideBySig(decision, await sign(holder, domain, decision)))
        .to.be.revertedWithCustomError(registry, "DepartmentInactive")
        .withArgs(ID.G);
    });

    describe("when the department's wallet is an EIP-1271 contract wallet", function () {
      it("records a decision its owners signed (2 of 3), with the wallet as signer", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, documents, owners, multisig, stranger, domain } = fixture;
        const decision = await decisionOf(fixture, ID.H, { reviewedMask: 0b011n });
        const signature = await multisign([owners[0], owners[2]], domain, decision);
        await expect(registry.connect(stranger).decideBySig(decision, signature))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(
            1n,
            ID.H,
            0,
            Decision.Approved,
            0,
            0b011,
            await documents.packedDocumentsOf(1n),
            REMARKS,
            await multisig.getAddress(),
            Custody.DepartmentHeld,
          );
        expect((await registry.departmentRecord(ID.H)).nonce).to.equal(1n);
      });

      it("reverts with ReviewInvalidSignature when the wallet refuses the signature", async function () {
        const fixture = await loadFixture(deploySignedDecisionRequest);
        const { registry, owners, multisig, holder, stranger, domain } = fixture;
        const decision = await decisionOf(fixture, ID.H);
        const other = await decisionOf(fixture, ID.H, { remarksHash: ethers.id("other") });
        const refused = [
          await multisign([owners[0]], domain, decision), // one owner of the two needed
          await multisign([owners[0], owners[0]], domain, decision), // the same owner twice
          await multisign([owners[1], owners[0]], domain, decision), // out of order
          ethers.concat([await sign(owners[0], domain, decision), await sign(holder, domain, decision)]), // a non-owner
          await multisign([owners[0], owners[1]], domain, other), // owners' signatures of another decision
          await sign(holder, domain, decision), // an ECDSA signature instead of the wallet's
        ];
        for (const signature of refused) {
          await expect(registry.connect(stranger).decideBySig(decision, signature))
            .to.be.revertedWithCustomError(registry, "ReviewInvalidSignature")
            .withArgs(ID.H, await multisig.getAddress());
        }
        expect((await registry.departmentRecord(ID.H)).nonce).to.equal(0n);
      });
    });
  });
});
