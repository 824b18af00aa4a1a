import { expect } from "chai";
import { network } from "hardhat";
import LicencePlatform from "../../ignition/modules/LicencePlatform.ts";
import type { ApprovalRegistry } from "../../types/ethers-contracts/index.ts";
import {
  BUILDING_PERMIT,
  code,
  COMMITMENT,
  Custody,
  Decision,
  decisionFor,
  deployPlatform,
  domainOf,
  ethers,
  Execution,
  Completion,
  OnRejection,
  keyProof,
  loadFixture,
  networkHelpers,
  ROLES,
  sha,
  signDecision,
  stage,
  Status,
  uuid,
  VALIDITY_SECONDS,
  WALLET_DELAY,
} from "./helpers/fixtures.ts";

// What a hostile platform (its administration and operator keys, its relayer holding signatures back, its second
// network) tries in order to make a licence that no department gave, and what stops each attempt on chain.

const ID = { A: 1n, B: 2n, G: 7n } as const;

/**
 * The platform with an administration key that holds ADMIN_ROLE only (as the API's does) and department G held
 * by its own key (`holder`); each test registers its workflow through governance and submits token 1.
 */
async function deployHostilePlatform() {
  const platform = await deployPlatform();
  const { registry, token, deployer, signers } = platform;
  const administration = signers[14];
  const holder = signers[12];
  for (const c of [token, registry]) await c.connect(deployer).grantRole(ROLES.ADMIN, administration.address);
  await registry.connect(deployer).registerDepartment(code("G"), holder.address, Custody.DepartmentHeld);
  return { ...platform, administration, holder };
}

type Platform = Awaited<ReturnType<typeof deployHostilePlatform>>;

/** Governance registers `stages` for BUILDING_PERMIT; token 1 is minted with three documents and submitted. */
async function registerAndSubmit(platform: Platform, stages: ReturnType<typeof stage>[]) {
  const { registry, token, documents, deployer, operator, applicant } = platform;
  await registry.connect(deployer).registerWorkflow(BUILDING_PERMIT, ethers.id("workflow"), VALIDITY_SECONDS, stages);
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  for (let i = 0; i < 3; i++) {
    await documents.connect(operator).anchorDocument(1n, uuid(i + 1), code(`DOC_${i}`), sha(`doc-${i}-v1`));
  }
  await registry.connect(operator).submit(1n);
}

async function signedApproval(platform: Platform, departmentId: bigint) {
  const decision = await decisionFor(platform.registry, departmentId, 1n, { decision: Decision.Approved });
  return { decision, signature: await signDecision(platform.registry, platform.holder, decision) };
}

describe("no key the platform holds can make a licence", function () {
  describe("a sham department and workflow version from the administration and operator keys", function () {
    it("is refused: registering a department, a workflow version or a wallet change is governance's", async function () {
      const { registry, administration, operator, departments, signers } = await loadFixture(deployHostilePlatform);
      const sham = signers[15];
      // A department's own wallet cannot either.
      for (const caller of [administration, operator, departments.A]) {
        const proof = await keyProof(registry, sham, code("FIRE_SAFETY"), sham.address, Custody.DepartmentHeld);
        await expect(
          registry.connect(caller).registerDepartment(code("FIRE_SAFETY"), sham.address, Custody.DepartmentHeld, proof),
        )
          .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.DEFAULT_ADMIN);
        await expect(
          registry
            .connect(caller)
            .registerWorkflow(BUILDING_PERMIT, ethers.id("sham"), 0n, [
              stage({ completion: Completion.Any, departments: ["A"] }),
            ]),
        )
          .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.DEFAULT_ADMIN);
        await expect(registry.connect(caller).proposeDepartmentWallet(code("G"), sham.address, Custody.DepartmentHeld))
          .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.DEFAULT_ADMIN);
      }
    });

    it("is refused even for governance without the wallet's own key proof", async function () {
      const { registry, deployer, holder, signers } = await loadFixture(deployHostilePlatform);
      const claimed = signers[15];
      // A proof signed by another key (the platform's) for a wallet it does not hold.
      const forged = await keyProof(registry, holder, code("FIRE_SAFETY"), claimed.address, Custody.DepartmentHeld);
      await expect(
        registry
          .connect(deployer)
          .registerDepartment(code("FIRE_SAFETY"), claimed.address, Custody.DepartmentHeld, forged),
      )
        .to.be.revertedWithCustomError(registry, "DepartmentInvalidKeyProof")
        .withArgs(code("FIRE_SAFETY"), claimed.address);
      // A proof for another custody than the one registered.
      const custodial = await keyProof(registry, claimed, code("FIRE_SAFETY"), claimed.address, Custody.Custodial);
      await expect(
        registry
          .connect(deployer)
          .registerDepartment(code("FIRE_SAFETY"), claimed.address, Custody.DepartmentHeld, custodial),
      ).to.be.revertedWithCustomError(registry, "DepartmentInvalidKeyProof");
    });
  });

  describe("a signed decision held back by the relayer", function () {
    it("cannot land in a later stage: it names the stage and round it was given in", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, departments, stranger } = platform;
      await registerAndSubmit(platform, [
        stage({ executionType: Execution.Parallel, completion: Completion.Any, departments: ["A", "G"] }),
        stage({ departments: ["G"] }),
      ]);
      const held = await signedApproval(platform, ID.G);
      // Another department completes stage 1 (ANY); G's stage-1 approval is relayed into stage 2.
      const a = await decisionFor(registry, ID.A, 1n, { decision: Decision.Approved });
      await registry.connect(departments.A).decide(a);
      const progress = await registry.progressOf(1n);
      expect(progress.stage).to.equal(1n);
      await expect(registry.connect(stranger).decideBySig(held.decision, held.signature))
        .to.be.revertedWithCustomError(registry, "ReviewWrongRound")
        .withArgs(1n, 0, held.decision.round, 1, progress.stageStartedAt);
      expect((await platform.token.licence(1n)).status).to.equal(Status.Submitted);
    });

    it("cannot land after the department's own later decision: every decision consumes the nonce", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, operator, holder, stranger } = platform;
      await registerAndSubmit(platform, [stage({ departments: ["G"] })]);
      const held = await signedApproval(platform, ID.G);
      // The department then asks for changes from its own wallet (the direct route), the applicant resubmits.
      const changes = await decisionFor(registry, ID.G, 1n, { decision: Decision.ChangesRequested });
      await registry.connect(holder).decide(changes);
      await registry.connect(operator).resubmit(1n);
      await expect(registry.connect(stranger).decideBySig(held.decision, held.signature))
        .to.be.revertedWithCustomError(registry, "ReviewInvalidNonce")
        .withArgs(ID.G, 1n, 0n);
      expect((await platform.token.licence(1n)).status).to.equal(Status.Submitted);
    });

    it("cannot land after the stage restarted, even when the department decided nothing since", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, operator, departments, stranger } = platform;
      await registerAndSubmit(platform, [
        stage({ executionType: Execution.Parallel, onRejection: OnRejection.RetryStage, departments: ["A", "G"] }),
      ]);
      const held = await signedApproval(platform, ID.G);
      const rejection = await decisionFor(registry, ID.A, 1n, { decision: Decision.Rejected, reasonCode: 2 });
      await registry.connect(departments.A).decide(rejection);
      await registry.connect(operator).resubmit(1n);
      await expect(registry.connect(stranger).decideBySig(held.decision, held.signature)).to.be.revertedWithCustomError(
        registry,
        "ReviewWrongRound",
      );
    });

    it("is void once the department moves its nonce on (increaseDecisionNonce)", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, holder, stranger } = platform;
      await registerAndSubmit(platform, [stage({ departments: ["G"] })]);
      const held = await signedApproval(platform, ID.G);
      await expect(registry.connect(holder).increaseDecisionNonce(5n))
        .to.emit(registry, "DecisionNonceIncreased")
        .withArgs(ID.G, 0n, 5n);
      await expect(registry.connect(stranger).decideBySig(held.decision, held.signature))
        .to.be.revertedWithCustomError(registry, "ReviewInvalidNonce")
        .withArgs(ID.G, 5n, 0n);
      // Only forward, only by a department wallet.
      await expect(registry.connect(holder).increaseDecisionNonce(5n)).to.be.revertedWithCustomError(
        registry,
        "ReviewInvalidNonceIncrease",
      );
      await expect(registry.connect(stranger).increaseDecisionNonce(9n))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(stranger.address);
    });

    it("cannot carry a deadline further than a day ahead", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, holder, stranger } = platform;
      await registerAndSubmit(platform, [stage({ departments: ["G"] })]);
      const now = BigInt(await networkHelpers.time.latest());
      const decision = await decisionFor(registry, ID.G, 1n, {
        decision: Decision.Approved,
        deadline: now + 86_400n * 30n,
      });
      await expect(
        registry.connect(stranger).decideBySig(decision, await signDecision(registry, holder, decision)),
      ).to.be.revertedWithCustomError(registry, "ReviewDeadlineTooFar");
    });

    it("names the documents' hashes: a signature over the first site plan cannot approve the second", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, documents, operator, stranger } = platform;
      await registerAndSubmit(platform, [stage({ departments: ["G"] })]);
      const held = await signedApproval(platform, ID.G);
      await documents.connect(operator).anchorVersion(1n, sha("doc-0-v1"), sha("doc-0-v2"));
      await expect(registry.connect(stranger).decideBySig(held.decision, held.signature))
        .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
        .withArgs(1n, 0, sha("doc-0-v1"));
    });
  });

  describe("a staging signature relayed on production", function () {
    it("is refused: the same registry address on the same chain id has another per-deployment salt", async function () {
      // Two networks set up by the book: same chain id, same deployer, same addresses.
      const deployOn = async (connection: Awaited<ReturnType<typeof network.create>>, startsAt: number) => {
        const [, operator, admin, keeper] = await connection.ethers.getSigners();
        await connection.networkHelpers.time.setNextBlockTimestamp(startsAt);
        const { registry } = await connection.ignition.deploy(LicencePlatform, {
          parameters: {
            LicencePlatform: { operator: operator.address, admin: admin.address, keeper: keeper.address },
          },
        });
        return registry as unknown as ApprovalRegistry;
      };
      const now = Math.floor(Date.now() / 1000) + 1000;
      const staging = await deployOn(await network.create(), now);
      const production = await deployOn(await network.create(), now + 86_400);
      expect(await staging.getAddress()).to.equal(await production.getAddress());
      const stagingDomain = await domainOf(staging);
      const productionDomain = await domainOf(production);
      expect(stagingDomain.chainId).to.equal(productionDomain.chainId);
      expect(stagingDomain.salt).to.not.equal(productionDomain.salt);
      const types = { Decision: [{ name: "tokenId", type: "uint256" }] };
      expect(ethers.TypedDataEncoder.hash(stagingDomain, types, { tokenId: 1n })).to.not.equal(
        ethers.TypedDataEncoder.hash(productionDomain, types, { tokenId: 1n }),
      );
    });
  });

  describe("a document added in a later stage", function () {
    it("sends review back to the earlier stage: the licence is not issued over a file its first department never saw", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, documents, operator, departments, token } = platform;
      await registerAndSubmit(platform, [stage({ departments: ["A"] }), stage({ departments: ["B"] })]);
      await registry
        .connect(departments.A)
        .decide(await decisionFor(registry, ID.A, 1n, { decision: Decision.Approved }));
      expect((await registry.progressOf(1n)).stage).to.equal(1n);
      // The revised plan arrives as a new document in stage 2, then stage 2's department approves.
      await documents.connect(operator).anchorDocument(1n, uuid(9), code("SITE_PLAN_REVISED"), sha("revised"));
      expect((await registry.progressOf(1n)).stage).to.equal(0n);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
      // Stage 2's department cannot decide until stage 1 has been given again.
      await expect(
        registry.connect(departments.B).decide(await decisionFor(registry, ID.B, 1n, { decision: Decision.Approved })),
      )
        .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
        .withArgs(1n, 0, ID.B);
      expect((await token.licence(1n)).status).to.equal(Status.Submitted);
    });
  });

  describe("a wallet swap for a department that holds its own key", function () {
    it("waits the public delay unless the outgoing wallet consents; a custodial wallet's consent waives nothing", async function () {
      const platform = await loadFixture(deployHostilePlatform);
      const { registry, deployer, holder, departments, signers, stranger } = platform;
      const next = signers[16];
      await registry.connect(deployer).proposeDepartmentWallet(code("G"), next.address, Custody.DepartmentHeld);
      await expect(registry.connect(stranger).activateDepartmentWallet(code("G"))).to.be.revertedWithCustomError(
        registry,
        "DepartmentWalletChangeNotDue",
      );
      await expect(registry.connect(stranger).consentDepartmentWallet(code("G")))
        .to.be.revertedWithCustomError(registry, "DepartmentUnauthorizedConsent")
        .withArgs(ID.G, stranger.address);
      await expect(registry.connect(holder).consentDepartmentWallet(code("G")))
        .to.emit(registry, "DepartmentWalletConsented")
        .withArgs(ID.G, next.address);
      await expect(registry.connect(stranger).activateDepartmentWallet(code("G")))
        .to.emit(registry, "DepartmentWalletRotated")
        .withArgs(ID.G, holder.address, next.address, Custody.DepartmentHeld);

      // Custodial A: the platform holds the outgoing key, so its consent is the platform's and waits the delay.
      const other = signers[17];
      await registry.connect(deployer).proposeDepartmentWallet(code("A"), other.address, Custody.Custodial);
      await registry.connect(departments.A).consentDepartmentWallet(code("A"));
      await expect(registry.connect(stranger).activateDepartmentWallet(code("A"))).to.be.revertedWithCustomError(
        registry,
        "DepartmentWalletChangeNotDue",
      );
      await networkHelpers.time.increase(WALLET_DELAY);
      await registry.connect(stranger).activateDepartmentWallet(code("A"));
      expect((await registry.departmentRecord(ID.A)).wallet).to.equal(other.address);
    });
  });

  describe("roles", function () {
    it("no contract grants a role to a department wallet", async function () {
      const { token, documents, registry, deployer, departments, holder } = await loadFixture(deployHostilePlatform);
      for (const wallet of [departments.A, holder]) {
        await expect(token.connect(deployer).grantRole(ROLES.OPERATOR, wallet.address))
          .to.be.revertedWithCustomError(token, "LicenceRoleToDepartmentWallet")
          .withArgs(wallet.address);
        await expect(documents.connect(deployer).grantRole(ROLES.OPERATOR, wallet.address))
          .to.be.revertedWithCustomError(documents, "DocumentRoleToDepartmentWallet")
          .withArgs(wallet.address);
        await expect(registry.connect(deployer).grantRole(ROLES.ADMIN, wallet.address))
          .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
          .withArgs(wallet.address);
      }
    });

    it("no wallet holding a role on the token or the document registry becomes a department's", async function () {
      const { token, documents, registry, deployer, signers } = await loadFixture(deployHostilePlatform);
      const [onToken, onDocuments] = [signers[15], signers[16]];
      await token.connect(deployer).grantRole(ROLES.ADMIN, onToken.address);
      await documents.connect(deployer).grantRole(ROLES.OPERATOR, onDocuments.address);
      for (const wallet of [onToken, onDocuments]) {
        await expect(registry.connect(deployer).registerDepartment(code("NEW"), wallet.address, Custody.Custodial))
          .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
          .withArgs(wallet.address);
      }
    });
  });
});
