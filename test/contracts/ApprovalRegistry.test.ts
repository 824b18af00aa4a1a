import { expect } from "chai";
import type { Result } from "ethers";
import {
  BUILDING_PERMIT,
  code,
  connection,
  COMMITMENT,
  Completion,
  Custody,
  Decision,
  deployPlatform,
  deploySubmittedRequest,
  deployWithReferenceWorkflow,
  ethers,
  Execution,
  latestVersions,
  loadFixture,
  networkHelpers,
  OnRejection,
  OnTimeout,
  Phase,
  REFERENCE_STAGES,
  ROLES,
  sha,
  stage,
  Status,
  timestampOf,
  TRADE_LICENSE,
  uuid,
  VALIDITY_SECONDS,
  WALLET_DELAY,
  keyProof,
} from "./helpers/fixtures.ts";

// Administration and reads of the ApprovalRegistry: departments and versioned workflows.
// The review itself (decisions, rejections, timeouts, invalidation) is in ApprovalRegistry.review.test.ts.

const REMARKS = ethers.id("remarks");
const DEFINITION = ethers.id("definition");
const ID = { A: 1n, B: 2n, C: 3n, D: 4n, E: 5n, F: 6n } as const;

/** Department ids packed 16 bits per position, as the registry stores them. */
function packIds(ids: bigint[]) {
  return ids.reduce((packed, id, p) => packed | (id << BigInt(16 * p)), 0n);
}

/** The stored Stage tuple (field order of IApprovalRegistry.Stage) the registry compiles from `input`. */
function storedStage(input: ReturnType<typeof stage>, ids: bigint[]) {
  const everyone = (1 << ids.length) - 1;
  return [
    input.executionType,
    input.completion,
    input.threshold,
    input.onTimeout,
    input.onRejection,
    ids.length,
    input.completion === Completion.All ? everyone : input.mandatoryMask,
    input.timeoutSeconds,
    packIds(ids),
  ];
}

/** A struct or multi-value return (an ethers Result) as plain nested arrays, for deep equality. */
function plain(result: object) {
  return (result as Result).toArray(true);
}

/** A DepartmentRecord as plain values (field order of IApprovalRegistry.DepartmentRecord). */
function record(
  departmentCode: string,
  wallet: string,
  custody: bigint,
  pending: {
    pendingWallet?: string;
    pendingCustody?: bigint;
    pendingEffectiveAt?: bigint;
    pendingConsented?: boolean;
    nonce?: bigint;
  } = {},
) {
  return [
    departmentCode,
    wallet,
    custody,
    true,
    pending.nonce ?? 0n,
    pending.pendingWallet ?? ethers.ZeroAddress,
    pending.pendingCustody ?? 0n,
    pending.pendingEffectiveAt ?? 0n,
    pending.pendingConsented ?? false,
  ];
}

/** Workflow with stage 0 PARALLEL ANY [E, F] (mandatory F), a second version of BUILDING_PERMIT. */
const SECOND_VERSION_STAGES = [
  stage({
    executionType: Execution.Parallel,
    completion: Completion.Any,
    mandatoryMask: 0b10,
    departments: ["E", "F"],
  }),
];

async function deployWithTwoWorkflowVersions() {
  const platform = await deployWithReferenceWorkflow();
  const { token, documents, registry, admin, operator, applicant } = platform;
  // Token 1 is pinned to version 1 (reference: SEQUENTIAL [A, B], then PARALLEL [C, D]).
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  await documents.connect(operator).anchorDocument(1n, uuid(1), code("DOC_0"), sha("doc-0-v1"));
  await registry.connect(admin).registerWorkflow(BUILDING_PERMIT, ethers.id("v2"), 0n, SECOND_VERSION_STAGES);
  // Token 2 is pinned to version 2.
  await token.connect(operator).mint(applicant.address, 2n, BUILDING_PERMIT, COMMITMENT);
  return platform;
}

describe("ApprovalRegistry", function () {
  describe("constructor", function () {
    it("wires the token, the document registry and the decision verifier, and grants DEFAULT_ADMIN_ROLE", async function () {
      const { token, documents, verifier, extension, registry, deployer } = await loadFixture(deployPlatform);
      expect(await registry.licenceToken()).to.equal(await token.getAddress());
      expect(await registry.registryExtension()).to.equal(await extension.getAddress());
      expect(await registry.documentRegistry()).to.equal(await documents.getAddress());
      expect(await registry.decisionVerifier()).to.equal(await verifier.getAddress());
      expect(await registry.walletDelay()).to.equal(WALLET_DELAY);
      expect(await registry.hasRole(ROLES.DEFAULT_ADMIN, deployer.address)).to.equal(true);
      expect(await registry.MAX_STAGES()).to.equal(16n);
      expect(await registry.MAX_STAGE_DEPARTMENTS()).to.equal(8n);
      // The extension enforces the limits the registry's loops are bounded by: the two must not drift apart.
      expect(await extension.MAX_STAGES()).to.equal(await registry.MAX_STAGES());
      expect(await extension.MAX_STAGE_DEPARTMENTS()).to.equal(await registry.MAX_STAGE_DEPARTMENTS());
      expect(await registry.MAX_REJECTION_REASON()).to.equal(5n);
      expect(await registry.REASON_TIMEOUT()).to.equal(6n);
    });

    it("reverts with InvalidWalletDelay when the wallet delay is zero", async function () {
      const { token, documents, verifier, extension, registry, deployer } = await loadFixture(deployPlatform);
      const factory = await ethers.getContractFactory("ApprovalRegistry");
      await expect(factory.deploy(token, documents, verifier, extension, deployer.address, 0n))
        .to.be.revertedWithCustomError(registry, "InvalidWalletDelay")
        .withArgs(0n);
    });
  });

  // ============================================================================================ departments

  describe("registerDepartment", function () {
    it("numbers departments from 1 in registration order", async function () {
      const { registry, departments } = await loadFixture(deployPlatform);
      for (const [name, id] of Object.entries(ID)) {
        expect(await registry.departmentByCode(code(name))).to.deep.equal([id, departments[name].address, true]);
      }
    });

    it("registers the next department with its wallet and custody, active", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      const wallet = signers[12];
      const proof = await keyProof(registry, wallet, code("G"), wallet.address, Custody.DepartmentHeld);
      expect(
        await registry
          .connect(admin)
          .registerDepartment.staticCall(code("G"), wallet.address, Custody.DepartmentHeld, proof),
      ).to.equal(7n);
      await expect(registry.connect(admin).registerDepartment(code("G"), wallet.address, Custody.DepartmentHeld))
        .to.emit(registry, "DepartmentRegistered")
        .withArgs(7n, code("G"), wallet.address, Custody.DepartmentHeld);
      expect(await registry.departmentByCode(code("G"))).to.deep.equal([7n, wallet.address, true]);
      expect(plain(await registry.departmentRecord(7n))).to.deep.equal(
        record(code("G"), wallet.address, Custody.DepartmentHeld),
      );
    });

    it("reverts with DepartmentInvalidCode when the code is zero", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).registerDepartment(ethers.ZeroHash, signers[12].address, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentInvalidCode")
        .withArgs();
    });

    it("reverts with DepartmentInvalidWallet when the wallet is the zero address", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).registerDepartment(code("G"), ethers.ZeroAddress, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentInvalidWallet")
        .withArgs(ethers.ZeroAddress);
    });

    it("reverts with DepartmentAlreadyRegistered when the code is already registered", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).registerDepartment(code("A"), signers[12].address, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentAlreadyRegistered")
        .withArgs(code("A"));
    });

    it("reverts with DepartmentWalletInUse when the wallet belongs to another department", async function () {
      const { registry, admin, departments } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).registerDepartment(code("G"), departments.B.address, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletInUse")
        .withArgs(departments.B.address);
    });

    it("reverts with DepartmentWalletHoldsRole for every role holder when the wallet holds a role", async function () {
      const { registry, deployer, admin, operator, keeper } = await loadFixture(deployPlatform);
      for (const holder of [deployer, admin, operator, keeper]) {
        await expect(registry.connect(admin).registerDepartment(code("G"), holder.address, Custody.Custodial))
          .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
          .withArgs(holder.address);
      }
    });

    it("reverts with DepartmentLimitReached when 65,535 departments are registered", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      // Slot 0 is AccessControl's role mapping; slot 1 holds the department count (uint16).
      const address = await registry.getAddress();
      expect(BigInt(await ethers.provider.getStorage(address, 1))).to.equal(6n);
      await networkHelpers.setStorageAt(address, 1, 0xffff);
      await expect(registry.connect(admin).registerDepartment(code("G"), signers[12].address, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentLimitReached")
        .withArgs();
    });
  });

  describe("grantRole", function () {
    describe("when the account is a department wallet", function () {
      it("reverts with DepartmentWalletHoldsRole, whatever the role", async function () {
        const { registry, deployer, departments } = await loadFixture(deployPlatform);
        for (const role of [ROLES.DEFAULT_ADMIN, ROLES.ADMIN, ROLES.OPERATOR, ROLES.KEEPER]) {
          await expect(registry.connect(deployer).grantRole(role, departments.A.address))
            .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
            .withArgs(departments.A.address);
          expect(await registry.hasRole(role, departments.A.address)).to.equal(false);
        }
      });

      it("reverts with DepartmentWalletHoldsRole for a wallet that became a department's by a change", async function () {
        const { registry, deployer, admin, signers } = await loadFixture(deployPlatform);
        const wallet = signers[12];
        await registry.connect(admin).proposeDepartmentWallet(code("A"), wallet.address, Custody.Custodial);
        await networkHelpers.time.increase(WALLET_DELAY);
        await registry.activateDepartmentWallet(code("A"));
        await expect(registry.connect(deployer).grantRole(ROLES.ADMIN, wallet.address))
          .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
          .withArgs(wallet.address);
      });
    });

    it("grants a role to a wallet that no department uses", async function () {
      const { registry, deployer, signers } = await loadFixture(deployPlatform);
      await expect(registry.connect(deployer).grantRole(ROLES.ADMIN, signers[12].address))
        .to.emit(registry, "RoleGranted")
        .withArgs(ROLES.ADMIN, signers[12].address, deployer.address);
    });
  });

  describe("setDepartmentActive", function () {
    it("deactivates and reactivates a department", async function () {
      const { registry, admin, departments } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).setDepartmentActive(code("C"), false))
        .to.emit(registry, "DepartmentActiveSet")
        .withArgs(ID.C, false);
      expect(await registry.departmentByCode(code("C"))).to.deep.equal([ID.C, departments.C.address, false]);
      expect((await registry.departmentRecord(ID.C)).active).to.equal(false);

      await expect(registry.connect(admin).setDepartmentActive(code("C"), true))
        .to.emit(registry, "DepartmentActiveSet")
        .withArgs(ID.C, true);
      expect((await registry.departmentRecord(ID.C)).active).to.equal(true);
    });

    describe("when the department is inactive", function () {
      it("reverts its decisions with DepartmentInactive until it is reactivated", async function () {
        const { documents, registry, admin, departments } = await loadFixture(deploySubmittedRequest);
        await registry.connect(admin).setDepartmentActive(code("A"), false);
        const packed = await documents.packedDocumentsOf(1n);
        await expect(registry.connect(departments.A).approve(1n, 0b1, packed, REMARKS))
          .to.be.revertedWithCustomError(registry, "DepartmentInactive")
          .withArgs(ID.A);
        await expect(registry.connect(departments.A).reject(1n, 1, 0b1, packed, REMARKS))
          .to.be.revertedWithCustomError(registry, "DepartmentInactive")
          .withArgs(ID.A);
        await expect(registry.connect(departments.A).requestChanges(1n, 0b1, packed, REMARKS))
          .to.be.revertedWithCustomError(registry, "DepartmentInactive")
          .withArgs(ID.A);

        await registry.connect(admin).setDepartmentActive(code("A"), true);
        await expect(registry.connect(departments.A).approve(1n, 0b1, packed, REMARKS))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(1n, ID.A, 0, Decision.Approved, 0, 0b1, packed, REMARKS, departments.A.address, Custody.Custodial);
      });

      it("reverts with DepartmentInactive when a new workflow lists it", async function () {
        const { registry, admin } = await loadFixture(deployPlatform);
        await registry.connect(admin).setDepartmentActive(code("D"), false);
        await expect(
          registry
            .connect(admin)
            .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [stage({ departments: ["A", "D"] })]),
        )
          .to.be.revertedWithCustomError(registry, "DepartmentInactive")
          .withArgs(ID.D);
      });
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller is not an admin", async function () {
      const { registry, departments } = await loadFixture(deployPlatform);
      await expect(registry.connect(departments.A).setDepartmentActive(code("A"), false))
        .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
        .withArgs(departments.A.address, ROLES.ADMIN);
    });
  });

  describe("proposeDepartmentWallet", function () {
    it("announces the change with the time it can take effect, and changes nothing yet", async function () {
      const { registry, admin, departments, signers } = await loadFixture(deployPlatform);
      const wallet = signers[12];
      const tx = registry.connect(admin).proposeDepartmentWallet(code("A"), wallet.address, Custody.DepartmentHeld);
      const effectiveAt = (await timestampOf(tx)) + WALLET_DELAY;
      await expect(tx)
        .to.emit(registry, "DepartmentWalletProposed")
        .withArgs(ID.A, wallet.address, Custody.DepartmentHeld, effectiveAt);
      expect(await registry.departmentByCode(code("A"))).to.deep.equal([ID.A, departments.A.address, true]);
      expect(plain(await registry.departmentRecord(ID.A))).to.deep.equal(
        record(code("A"), departments.A.address, Custody.Custodial, {
          pendingWallet: wallet.address,
          pendingCustody: Custody.DepartmentHeld,
          pendingEffectiveAt: effectiveAt,
        }),
      );
    });

    it("replaces a pending proposal, restarting the delay", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      await networkHelpers.time.increase(WALLET_DELAY);
      const tx = registry.connect(admin).proposeDepartmentWallet(code("A"), signers[13].address, Custody.Custodial);
      const effectiveAt = (await timestampOf(tx)) + WALLET_DELAY;
      await expect(tx)
        .to.emit(registry, "DepartmentWalletProposed")
        .withArgs(ID.A, signers[13].address, Custody.Custodial, effectiveAt);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletChangeNotDue")
        .withArgs(ID.A, effectiveAt);
    });

    it("accepts the current wallet, to change only the custody", async function () {
      const { registry, admin, departments } = await loadFixture(deployPlatform);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), departments.A.address, Custody.DepartmentHeld);
      await networkHelpers.time.increase(WALLET_DELAY);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.emit(registry, "DepartmentWalletRotated")
        .withArgs(ID.A, departments.A.address, departments.A.address, Custody.DepartmentHeld);
      expect(plain(await registry.departmentRecord(ID.A))).to.deep.equal(
        record(code("A"), departments.A.address, Custody.DepartmentHeld),
      );
    });

    it("reverts with DepartmentInvalidWallet when the wallet is the zero address", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).proposeDepartmentWallet(code("A"), ethers.ZeroAddress, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentInvalidWallet")
        .withArgs(ethers.ZeroAddress);
    });

    it("reverts with DepartmentWalletInUse when the wallet is another department's", async function () {
      const { registry, admin, departments } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).proposeDepartmentWallet(code("A"), departments.B.address, Custody.Custodial))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletInUse")
        .withArgs(departments.B.address);
    });

    it("reverts with DepartmentWalletHoldsRole for every role holder when the wallet holds a role", async function () {
      const { registry, deployer, admin, operator, keeper } = await loadFixture(deployPlatform);
      for (const holder of [deployer, admin, operator, keeper]) {
        await expect(registry.connect(admin).proposeDepartmentWallet(code("A"), holder.address, Custody.Custodial))
          .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
          .withArgs(holder.address);
      }
    });
  });

  describe("cancelDepartmentWallet", function () {
    it("lets the department's current wallet cancel a pending change", async function () {
      const { registry, admin, departments, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      await expect(registry.connect(departments.A).cancelDepartmentWallet(code("A")))
        .to.emit(registry, "DepartmentWalletCancelled")
        .withArgs(ID.A, signers[12].address, departments.A.address);
      expect(plain(await registry.departmentRecord(ID.A))).to.deep.equal(
        record(code("A"), departments.A.address, Custody.Custodial),
      );
      await networkHelpers.time.increase(WALLET_DELAY);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentNoWalletChange")
        .withArgs(ID.A);
    });

    it("lets an admin cancel a pending change", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      await expect(registry.connect(admin).cancelDepartmentWallet(code("A")))
        .to.emit(registry, "DepartmentWalletCancelled")
        .withArgs(ID.A, signers[12].address, admin.address);
    });

    it("reverts with DepartmentUnauthorizedCancel (the proposed wallet, another department, the operator) when the caller is neither the current wallet nor an admin", async function () {
      const { registry, admin, operator, departments, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      for (const caller of [signers[12], departments.B, operator]) {
        await expect(registry.connect(caller).cancelDepartmentWallet(code("A")))
          .to.be.revertedWithCustomError(registry, "DepartmentUnauthorizedCancel")
          .withArgs(ID.A, caller.address);
      }
    });

    it("reverts with DepartmentNoWalletChange when no change is pending", async function () {
      const { registry, departments } = await loadFixture(deployPlatform);
      await expect(registry.connect(departments.A).cancelDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentNoWalletChange")
        .withArgs(ID.A);
    });
  });

  describe("activateDepartmentWallet", function () {
    it("lets anyone activate a change once due: the new wallet replaces the old one", async function () {
      const { registry, admin, stranger, departments, signers } = await loadFixture(deployPlatform);
      const wallet = signers[12];
      await registry.connect(admin).proposeDepartmentWallet(code("A"), wallet.address, Custody.DepartmentHeld);
      await networkHelpers.time.increase(WALLET_DELAY);
      await expect(registry.connect(stranger).activateDepartmentWallet(code("A")))
        .to.emit(registry, "DepartmentWalletRotated")
        .withArgs(ID.A, departments.A.address, wallet.address, Custody.DepartmentHeld);
      expect(await registry.departmentByCode(code("A"))).to.deep.equal([ID.A, wallet.address, true]);
      expect(plain(await registry.departmentRecord(ID.A))).to.deep.equal(
        record(code("A"), wallet.address, Custody.DepartmentHeld),
      );
    });

    it("keeps the department's active flag", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).setDepartmentActive(code("A"), false);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      await networkHelpers.time.increase(WALLET_DELAY);
      await registry.activateDepartmentWallet(code("A"));
      expect(await registry.departmentByCode(code("A"))).to.deep.equal([ID.A, signers[12].address, false]);
    });

    it("frees the old wallet for another department", async function () {
      const { registry, admin, departments, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      await networkHelpers.time.increase(WALLET_DELAY);
      await registry.activateDepartmentWallet(code("A"));
      await expect(registry.connect(admin).registerDepartment(code("G"), departments.A.address, Custody.Custodial))
        .to.emit(registry, "DepartmentRegistered")
        .withArgs(7n, code("G"), departments.A.address, Custody.Custodial);
    });

    it("reverts with DepartmentWalletChangeNotDue until the second it is due when the delay has not passed", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      const tx = registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      const effectiveAt = (await timestampOf(tx)) + WALLET_DELAY;
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletChangeNotDue")
        .withArgs(ID.A, effectiveAt);
      await networkHelpers.time.setNextBlockTimestamp(effectiveAt - 1n);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletChangeNotDue")
        .withArgs(ID.A, effectiveAt);
      await networkHelpers.time.setNextBlockTimestamp(effectiveAt);
      await expect(registry.activateDepartmentWallet(code("A"))).to.emit(registry, "DepartmentWalletRotated");
    });

    it("reverts with DepartmentWalletInUse when the proposed wallet became another department's during the delay", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      const wallet = signers[12];
      await registry.connect(admin).proposeDepartmentWallet(code("A"), wallet.address, Custody.Custodial);
      await registry.connect(admin).registerDepartment(code("G"), wallet.address, Custody.Custodial);
      await networkHelpers.time.increase(WALLET_DELAY);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletInUse")
        .withArgs(wallet.address);
    });

    it("reverts with DepartmentWalletHoldsRole when the proposed wallet was given a role during the delay", async function () {
      const { registry, deployer, admin, signers } = await loadFixture(deployPlatform);
      const wallet = signers[12];
      await registry.connect(admin).proposeDepartmentWallet(code("A"), wallet.address, Custody.Custodial);
      await registry.connect(deployer).grantRole(ROLES.OPERATOR, wallet.address);
      await networkHelpers.time.increase(WALLET_DELAY);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletHoldsRole")
        .withArgs(wallet.address);
    });

    it("reverts with DepartmentNoWalletChange when no change is pending", async function () {
      const { registry } = await loadFixture(deployPlatform);
      await expect(registry.activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentNoWalletChange")
        .withArgs(ID.A);
    });
  });

  describe("the rotation forgery (an administrator deciding for a department)", function () {
    it("fails: the proposed wallet cannot decide before the delay, and the change is public and cancellable", async function () {
      const { documents, registry, admin, departments, signers } = await loadFixture(deploySubmittedRequest);
      const forger = signers[12];
      const packed = await documents.packedDocumentsOf(1n);
      // 1. The administrator proposes its own wallet X for department A: the proposal is public.
      const tx = registry.connect(admin).proposeDepartmentWallet(code("A"), forger.address, Custody.Custodial);
      const effectiveAt = (await timestampOf(tx)) + WALLET_DELAY;
      await expect(tx)
        .to.emit(registry, "DepartmentWalletProposed")
        .withArgs(ID.A, forger.address, Custody.Custodial, effectiveAt);
      // 2. X cannot decide, nor can the change be activated, before the delay.
      await expect(registry.connect(forger).approve(1n, 0, packed, REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(forger.address);
      await expect(registry.connect(admin).activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentWalletChangeNotDue")
        .withArgs(ID.A, effectiveAt);
      // 3. The administrator itself cannot decide either.
      await expect(registry.connect(admin).approve(1n, 0, packed, REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(admin.address);
      // 4. The department sees the proposal and cancels it from its current wallet.
      await expect(registry.connect(departments.A).cancelDepartmentWallet(code("A")))
        .to.emit(registry, "DepartmentWalletCancelled")
        .withArgs(ID.A, forger.address, departments.A.address);
      await networkHelpers.time.increaseTo(effectiveAt);
      await expect(registry.connect(admin).activateDepartmentWallet(code("A")))
        .to.be.revertedWithCustomError(registry, "DepartmentNoWalletChange")
        .withArgs(ID.A);
      await expect(registry.connect(forger).approve(1n, 0, packed, REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(forger.address);
      expect((await registry.decisionsOf(1n, 0))[1]).to.deep.equal([Decision.Pending, Decision.Pending]);
    });

    it("cannot take effect within the block that proposes it", async function () {
      const { documents, registry, admin, signers } = await loadFixture(deploySubmittedRequest);
      const forger = signers[12];
      const packed = await documents.packedDocumentsOf(1n);
      // Propose, activate and decide in one block: only the proposal is mined.
      await networkHelpers.mine();
      await connection.provider.request({ method: "evm_setAutomine", params: [false] });
      try {
        const propose = await registry
          .connect(admin)
          .proposeDepartmentWallet(code("A"), forger.address, Custody.Custodial);
        const activate = await registry.connect(admin).activateDepartmentWallet(code("A"), { gasLimit: 200_000n });
        const decide = await registry.connect(forger).approve(1n, 0, packed, REMARKS, { gasLimit: 300_000n });
        await networkHelpers.mine();
        const receipts = await Promise.all(
          [propose, activate, decide].map((tx) => ethers.provider.getTransactionReceipt(tx.hash)),
        );
        expect(new Set(receipts.map((r) => r!.blockNumber)).size).to.equal(1);
        expect(receipts.map((r) => r!.status)).to.deep.equal([1, 0, 0]);
      } finally {
        await connection.provider.request({ method: "evm_setAutomine", params: [true] });
      }
      expect((await registry.departmentRecord(ID.A)).wallet).to.not.equal(forger.address);
      expect((await registry.decisionsOf(1n, 0))[1]).to.deep.equal([Decision.Pending, Decision.Pending]);
    });

    it("waits out its delay in public: after it, the new wallet decides and the old one cannot", async function () {
      const { documents, registry, admin, departments, signers } = await loadFixture(deploySubmittedRequest);
      const wallet = signers[12];
      const packed = await documents.packedDocumentsOf(1n);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), wallet.address, Custody.Custodial);
      // Until activation the current wallet still decides for the department.
      await networkHelpers.time.increase(WALLET_DELAY);
      await registry.activateDepartmentWallet(code("A"));
      await expect(registry.connect(departments.A).approve(1n, 0b111, packed, REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(departments.A.address);
      await expect(registry.connect(wallet).approve(1n, 0b111, packed, REMARKS))
        .to.emit(registry, "DecisionRecorded")
        .withArgs(1n, ID.A, 0, Decision.Approved, 0, 0b111, packed, REMARKS, wallet.address, Custody.Custodial);
    });

    it("lets the current wallet decide while a change is pending", async function () {
      const { documents, registry, admin, departments, signers } = await loadFixture(deploySubmittedRequest);
      const packed = await documents.packedDocumentsOf(1n);
      await registry.connect(admin).proposeDepartmentWallet(code("A"), signers[12].address, Custody.Custodial);
      await expect(registry.connect(departments.A).approve(1n, 0, packed, REMARKS))
        .to.emit(registry, "DecisionRecorded")
        .withArgs(1n, ID.A, 0, Decision.Approved, 0, 0b111, packed, REMARKS, departments.A.address, Custody.Custodial);
    });
  });

  describe("an unknown department code", function () {
    it("reverts with DepartmentUnknown in departmentByCode, setDepartmentActive and every wallet change", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      const asAdmin = registry.connect(admin);
      for (const unknown of [code("Z"), ethers.ZeroHash]) {
        await expect(registry.departmentByCode(unknown))
          .to.be.revertedWithCustomError(registry, "DepartmentUnknown")
          .withArgs(unknown);
      }
      for (const call of [
        () => asAdmin.setDepartmentActive(code("Z"), false),
        () => asAdmin.proposeDepartmentWallet(code("Z"), signers[12].address, Custody.Custodial),
        () => asAdmin.cancelDepartmentWallet(code("Z")),
      ]) {
        await expect(call()).to.be.revertedWithCustomError(registry, "DepartmentUnknown").withArgs(code("Z"));
      }
    });
  });

  describe("departmentRecord", function () {
    it("returns the code, wallet, custody, active flag, nonce and no pending change", async function () {
      const { registry, departments } = await loadFixture(deployPlatform);
      expect(plain(await registry.departmentRecord(ID.F))).to.deep.equal(
        record(code("F"), departments.F.address, Custody.Custodial),
      );
    });

    it("reverts with DepartmentUnknownId when the id is unknown", async function () {
      const { registry } = await loadFixture(deployPlatform);
      for (const id of [0n, 7n]) {
        await expect(registry.departmentRecord(id))
          .to.be.revertedWithCustomError(registry, "DepartmentUnknownId")
          .withArgs(id);
      }
    });
  });

  // ============================================================================================ workflows

  describe("registerWorkflow", function () {
    const STAGES = [
      stage({ executionType: Execution.Sequential, departments: ["A", "B"] }),
      stage({
        executionType: Execution.Parallel,
        completion: Completion.Threshold,
        threshold: 2,
        mandatoryMask: 0b001,
        onTimeout: OnTimeout.Escalate,
        timeoutSeconds: 7200,
        onRejection: OnRejection.RetryStage,
        departments: ["C", "D", "E"],
      }),
      stage({
        executionType: Execution.Parallel,
        completion: Completion.Any,
        mandatoryMask: 0b10,
        onRejection: OnRejection.Escalate,
        departments: ["F", "A"],
      }),
    ];
    const STAGE_IDS = [
      [ID.A, ID.B],
      [ID.C, ID.D, ID.E],
      [ID.F, ID.A],
    ];

    it("registers version 1 of a workflow type and makes it active", async function () {
      const { registry, token, admin } = await loadFixture(deployPlatform);
      expect(
        await registry
          .connect(admin)
          .registerWorkflow.staticCall(BUILDING_PERMIT, DEFINITION, VALIDITY_SECONDS, STAGES),
      ).to.equal(1n);
      const tx = registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, VALIDITY_SECONDS, STAGES);
      await expect(tx)
        .to.emit(registry, "WorkflowRegistered")
        .withArgs(1n, BUILDING_PERMIT, 1n, DEFINITION, 3n, VALIDITY_SECONDS);
      for (const [i, input] of STAGES.entries()) {
        await expect(tx).to.emit(registry, "WorkflowStageRegistered").withArgs(1n, i, storedStage(input, STAGE_IDS[i]));
      }
      await expect(tx).to.emit(token, "ActiveWorkflowSet").withArgs(BUILDING_PERMIT, 1n);
      await expect(tx).not.to.emit(registry, "WorkflowDeactivated");

      expect(plain(await registry.workflow(1n))).to.deep.equal([
        BUILDING_PERMIT,
        DEFINITION,
        VALIDITY_SECONDS,
        1n,
        3n,
        true,
      ]);
      for (const [i, input] of STAGES.entries()) {
        expect(plain(await registry.stage(1n, i))).to.deep.equal(
          storedStage(input, STAGE_IDS[i]).map((v) => BigInt(v)),
        );
      }
      expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(1n);
      expect(await token.activeWorkflowOf(BUILDING_PERMIT)).to.equal(1n);
    });

    it("stores every position as mandatory for an ALL stage", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      await registry
        .connect(admin)
        .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
          stage({ completion: Completion.All, mandatoryMask: 0, departments: ["A", "B", "C"] }),
          stage({ completion: Completion.All, mandatoryMask: 0b01, departments: ["D", "E"] }),
        ]);
      expect((await registry.stage(1n, 0)).mandatoryMask).to.equal(0b111n);
      expect((await registry.stage(1n, 1)).mandatoryMask).to.equal(0b11n);
    });

    it("accepts 16 stages of 8 departments", async function () {
      const { registry, admin, signers } = await loadFixture(deployPlatform);
      await registry.connect(admin).registerDepartment(code("G"), signers[12].address, Custody.Custodial);
      await registry.connect(admin).registerDepartment(code("H"), signers[13].address, Custody.Custodial);
      const eight = stage({
        executionType: Execution.Parallel,
        completion: Completion.Threshold,
        threshold: 8,
        mandatoryMask: 0xff,
        departments: ["H", "G", "F", "E", "D", "C", "B", "A"],
      });
      const tx = registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, Array(16).fill(eight));
      await expect(tx).to.emit(registry, "WorkflowRegistered").withArgs(1n, BUILDING_PERMIT, 1n, DEFINITION, 16n, 0n);
      await expect(tx)
        .to.emit(registry, "WorkflowStageRegistered")
        .withArgs(1n, 15, storedStage(eight, [8n, 7n, 6n, 5n, 4n, 3n, 2n, 1n]));
      expect((await registry.stage(1n, 15)).departmentIds).to.equal(packIds([8n, 7n, 6n, 5n, 4n, 3n, 2n, 1n]));
    });

    describe("when a version of the type is active", function () {
      it("registers the next version and deactivates the previous one", async function () {
        const { registry, token, admin } = await loadFixture(deployWithReferenceWorkflow);
        const tx = registry.connect(admin).registerWorkflow(BUILDING_PERMIT, ethers.id("v2"), 0n, STAGES);
        await expect(tx)
          .to.emit(registry, "WorkflowRegistered")
          .withArgs(2n, BUILDING_PERMIT, 2n, ethers.id("v2"), 3n, 0n);
        await expect(tx).to.emit(registry, "WorkflowDeactivated").withArgs(1n, BUILDING_PERMIT);
        await expect(tx).to.emit(token, "ActiveWorkflowSet").withArgs(BUILDING_PERMIT, 2n);
        expect((await registry.workflow(1n)).active).to.equal(false);
        expect((await registry.workflow(2n)).active).to.equal(true);
        expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(2n);

        const tx3 = registry.connect(admin).registerWorkflow(BUILDING_PERMIT, ethers.id("v3"), 0n, REFERENCE_STAGES);
        await expect(tx3)
          .to.emit(registry, "WorkflowRegistered")
          .withArgs(3n, BUILDING_PERMIT, 3n, ethers.id("v3"), 2n, 0n);
        await expect(tx3).to.emit(registry, "WorkflowDeactivated").withArgs(2n, BUILDING_PERMIT);
      });

      it("numbers versions per workflow type and ids globally", async function () {
        const { registry, token, admin } = await loadFixture(deployWithReferenceWorkflow);
        const tx = registry.connect(admin).registerWorkflow(TRADE_LICENSE, DEFINITION, 0n, REFERENCE_STAGES);
        await expect(tx).to.emit(registry, "WorkflowRegistered").withArgs(2n, TRADE_LICENSE, 1n, DEFINITION, 2n, 0n);
        await expect(tx).to.emit(token, "ActiveWorkflowSet").withArgs(TRADE_LICENSE, 2n);
        await expect(tx).not.to.emit(registry, "WorkflowDeactivated");
        expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(1n);
        expect(await registry.activeWorkflowOf(TRADE_LICENSE)).to.equal(2n);
      });
    });

    it("continues the version numbers without deactivating anything when the previous version was deactivated", async function () {
      const { registry, admin } = await loadFixture(deployWithReferenceWorkflow);
      await registry.connect(admin).deactivateWorkflow(1n);
      const tx = registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, REFERENCE_STAGES);
      await expect(tx).to.emit(registry, "WorkflowRegistered").withArgs(2n, BUILDING_PERMIT, 2n, DEFINITION, 2n, 0n);
      await expect(tx).not.to.emit(registry, "WorkflowDeactivated");
      expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(2n);
    });

    it("reverts with WorkflowInvalidType when the workflow type is zero", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      await expect(registry.connect(admin).registerWorkflow(ethers.ZeroHash, DEFINITION, 0n, REFERENCE_STAGES))
        .to.be.revertedWithCustomError(registry, "WorkflowInvalidType")
        .withArgs();
    });

    it("reverts with WorkflowInvalidValidity, and accepts exactly 2^32-1 when the licence lifetime exceeds 2^32-1 seconds", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      const tooLong = 2n ** 32n;
      await expect(registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, tooLong, REFERENCE_STAGES))
        .to.be.revertedWithCustomError(registry, "WorkflowInvalidValidity")
        .withArgs(tooLong);
      await expect(
        registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, tooLong - 1n, REFERENCE_STAGES),
      ).to.emit(registry, "WorkflowRegistered");
    });

    it("reverts with WorkflowInvalidStageCount when there are no stages or more than 16", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      for (const count of [0, 17]) {
        const stages = Array(count).fill(stage({ departments: ["A"] }));
        await expect(registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, stages))
          .to.be.revertedWithCustomError(registry, "WorkflowInvalidStageCount")
          .withArgs(count);
      }
    });

    it("reverts with WorkflowInvalidStageDepartments when a stage has no departments or more than 8", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      const nine = ["A", "B", "C", "D", "E", "F", "G", "H", "I"];
      for (const departments of [[], nine]) {
        await expect(
          registry
            .connect(admin)
            .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [stage({ departments: ["A"] }), stage({ departments })]),
        )
          .to.be.revertedWithCustomError(registry, "WorkflowInvalidStageDepartments")
          .withArgs(1n, departments.length);
      }
    });

    it("reverts with DepartmentUnknown when a stage lists an unknown department", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      await expect(
        registry.connect(admin).registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [stage({ departments: ["A", "Z"] })]),
      )
        .to.be.revertedWithCustomError(registry, "DepartmentUnknown")
        .withArgs(code("Z"));
    });

    describe("when a stage lists a department twice", function () {
      it("reverts with WorkflowDuplicateDepartment", async function () {
        const { registry, admin } = await loadFixture(deployPlatform);
        await expect(
          registry
            .connect(admin)
            .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
              stage({ departments: ["A"] }),
              stage({ executionType: Execution.Parallel, departments: ["B", "C", "B"] }),
            ]),
        )
          .to.be.revertedWithCustomError(registry, "WorkflowDuplicateDepartment")
          .withArgs(1n, code("B"));
      });

      it("accepts the same department in different stages", async function () {
        const { registry, admin } = await loadFixture(deployPlatform);
        await expect(
          registry
            .connect(admin)
            .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
              stage({ departments: ["A"] }),
              stage({ departments: ["A"] }),
            ]),
        )
          .to.emit(registry, "WorkflowRegistered")
          .withArgs(1n, BUILDING_PERMIT, 1n, DEFINITION, 2n, 0n);
      });
    });

    describe("when the threshold does not fit the completion rule", function () {
      const cases = [
        { name: "THRESHOLD with threshold 0", completion: Completion.Threshold, threshold: 0 },
        { name: "THRESHOLD above the department count", completion: Completion.Threshold, threshold: 4 },
        { name: "ALL with a threshold", completion: Completion.All, threshold: 1 },
        { name: "ANY with a threshold", completion: Completion.Any, threshold: 1 },
      ];
      for (const { name, completion, threshold } of cases) {
        it(`reverts with WorkflowInvalidThreshold (${name})`, async function () {
          const { registry, admin } = await loadFixture(deployPlatform);
          await expect(
            registry
              .connect(admin)
              .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
                stage({ departments: ["A"] }),
                stage({ completion, threshold, departments: ["B", "C", "D"] }),
              ]),
          )
            .to.be.revertedWithCustomError(registry, "WorkflowInvalidThreshold")
            .withArgs(1n, threshold);
        });
      }

      it("accepts THRESHOLD 1 and THRESHOLD equal to the department count", async function () {
        const { registry, admin } = await loadFixture(deployPlatform);
        await expect(
          registry
            .connect(admin)
            .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
              stage({ completion: Completion.Threshold, threshold: 1, departments: ["B", "C", "D"] }),
              stage({ completion: Completion.Threshold, threshold: 3, departments: ["B", "C", "D"] }),
            ]),
        )
          .to.emit(registry, "WorkflowRegistered")
          .withArgs(1n, BUILDING_PERMIT, 1n, DEFINITION, 2n, 0n);
      });
    });

    it("reverts with WorkflowInvalidMandatoryMask when the mandatory mask names a position the stage does not have", async function () {
      const { registry, admin } = await loadFixture(deployPlatform);
      for (const completion of [Completion.Any, Completion.All]) {
        await expect(
          registry
            .connect(admin)
            .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
              stage({ departments: ["A"] }),
              stage({ completion, mandatoryMask: 0b1001, departments: ["B", "C", "D"] }),
            ]),
        )
          .to.be.revertedWithCustomError(registry, "WorkflowInvalidMandatoryMask")
          .withArgs(1n, 0b1001);
      }
    });

    describe("when the timeout and its action do not match", function () {
      const cases = [
        { name: "a timeout without an action", onTimeout: OnTimeout.None, timeoutSeconds: 3600 },
        { name: "an action without a timeout", onTimeout: OnTimeout.Notify, timeoutSeconds: 0 },
      ];
      for (const { name, onTimeout, timeoutSeconds } of cases) {
        it(`reverts with WorkflowInvalidTimeout (${name})`, async function () {
          const { registry, admin } = await loadFixture(deployPlatform);
          await expect(
            registry
              .connect(admin)
              .registerWorkflow(BUILDING_PERMIT, DEFINITION, 0n, [
                stage({ departments: ["A"] }),
                stage({ onTimeout, timeoutSeconds, departments: ["B"] }),
              ]),
          )
            .to.be.revertedWithCustomError(registry, "WorkflowInvalidTimeout")
            .withArgs(1n);
        });
      }
    });
  });

  describe("deactivateWorkflow", function () {
    it("deactivates the active version so that no request can be created", async function () {
      const { registry, token, admin, operator, applicant } = await loadFixture(deployWithReferenceWorkflow);
      const tx = registry.connect(admin).deactivateWorkflow(1n);
      await expect(tx).to.emit(registry, "WorkflowDeactivated").withArgs(1n, BUILDING_PERMIT);
      await expect(tx).to.emit(token, "ActiveWorkflowSet").withArgs(BUILDING_PERMIT, 0n);
      expect((await registry.workflow(1n)).active).to.equal(false);
      expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(0n);
      expect(await token.activeWorkflowOf(BUILDING_PERMIT)).to.equal(0n);
      await expect(token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT))
        .to.be.revertedWithCustomError(token, "LicenceNoActiveWorkflow")
        .withArgs(BUILDING_PERMIT);
    });

    it("lets a request created before the deactivation be reviewed", async function () {
      const { registry, token, admin, operator, applicant, departments } =
        await loadFixture(deployWithReferenceWorkflow);
      await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
      await registry.connect(admin).deactivateWorkflow(1n);
      await expect(registry.connect(operator).submit(1n)).to.emit(registry, "ReviewStarted").withArgs(1n, 1n);
      for (const name of ["A", "B", "C", "D"])
        await registry.connect(departments[name]).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      expect((await token.licence(1n)).status).to.equal(Status.Approved);
    });

    it("reverts with WorkflowUnknown when the workflow is unknown", async function () {
      const { registry, admin } = await loadFixture(deployWithReferenceWorkflow);
      for (const id of [0n, 2n]) {
        await expect(registry.connect(admin).deactivateWorkflow(id))
          .to.be.revertedWithCustomError(registry, "WorkflowUnknown")
          .withArgs(id);
      }
    });

    describe("when the workflow is already inactive", function () {
      it("reverts with WorkflowInactive", async function () {
        const { registry, admin } = await loadFixture(deployWithReferenceWorkflow);
        await registry.connect(admin).deactivateWorkflow(1n);
        await expect(registry.connect(admin).deactivateWorkflow(1n))
          .to.be.revertedWithCustomError(registry, "WorkflowInactive")
          .withArgs(1n);
      });

      it("reverts with WorkflowInactive for a superseded version", async function () {
        const { registry, admin } = await loadFixture(deployWithTwoWorkflowVersions);
        await expect(registry.connect(admin).deactivateWorkflow(1n))
          .to.be.revertedWithCustomError(registry, "WorkflowInactive")
          .withArgs(1n);
      });
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller is not an admin", async function () {
      const { registry, keeper } = await loadFixture(deployWithReferenceWorkflow);
      await expect(registry.connect(keeper).deactivateWorkflow(1n))
        .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
        .withArgs(keeper.address, ROLES.ADMIN);
    });
  });

  describe("workflow versions", function () {
    describe("when a new version is registered after a request was created", function () {
      it("pins the new request to the new version and the old one to its own", async function () {
        const { token, registry } = await loadFixture(deployWithTwoWorkflowVersions);
        expect((await token.licence(1n)).workflowId).to.equal(1n);
        expect((await token.licence(2n)).workflowId).to.equal(2n);
        expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(2n);
      });

      it("reviews the old request with the old version's departments to issuance", async function () {
        const { token, documents, registry, operator, departments } = await loadFixture(deployWithTwoWorkflowVersions);
        await expect(registry.connect(operator).submit(1n)).to.emit(registry, "ReviewStarted").withArgs(1n, 1n);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
        // Version 2's departments are not part of version 1.
        await expect(registry.connect(departments.E).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
          .withArgs(1n, 0, ID.E);

        const packed = await documents.packedDocumentsOf(1n);
        await registry.connect(departments.A).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.B).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
        await expect(registry.connect(departments.F).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
          .withArgs(1n, 1, ID.F);
        await registry.connect(departments.D).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
        const tx = registry.connect(departments.C).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
        await expect(tx)
          .to.emit(registry, "DecisionRecorded")
          .withArgs(1n, ID.C, 1, Decision.Approved, 0, 0b1, packed, REMARKS, departments.C.address, Custody.Custodial);
        await expect(tx).to.emit(registry, "StageCompleted").withArgs(1n, 1);
        // Version 1's validity applies, not version 2's (0: no expiry).
        const t = await timestampOf(tx);
        await expect(tx)
          .to.emit(token, "LicenceIssued")
          .withArgs(1n, t, t + VALIDITY_SECONDS);
        expect((await token.licence(1n)).status).to.equal(Status.Approved);
        expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
      });

      it("reviews the new request with the new version's departments", async function () {
        const { token, registry, operator, departments } = await loadFixture(deployWithTwoWorkflowVersions);
        await expect(registry.connect(operator).submit(2n)).to.emit(registry, "ReviewStarted").withArgs(2n, 2n);
        expect(await registry.pendingDepartmentsOf(2n)).to.deep.equal([ID.E, ID.F]);
        await expect(registry.connect(departments.A).approve(2n, 0, await latestVersions(registry, 2n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
          .withArgs(2n, 0, ID.A);
        const tx = registry.connect(departments.F).approve(2n, 0, await latestVersions(registry, 2n), REMARKS);
        await expect(tx)
          .to.emit(token, "LicenceIssued")
          .withArgs(2n, await timestampOf(tx), 0n);
      });
    });
  });

  describe("workflow", function () {
    it("reverts with WorkflowUnknown when the workflow is unknown", async function () {
      const { registry } = await loadFixture(deployWithReferenceWorkflow);
      for (const id of [0n, 2n]) {
        await expect(registry.workflow(id)).to.be.revertedWithCustomError(registry, "WorkflowUnknown").withArgs(id);
      }
    });
  });

  describe("stage", function () {
    it("returns the stored stage", async function () {
      const { registry } = await loadFixture(deployWithReferenceWorkflow);
      expect(plain(await registry.stage(1n, 1))).to.deep.equal(
        storedStage(REFERENCE_STAGES[1], [ID.C, ID.D]).map((v) => BigInt(v)),
      );
    });

    it("reverts with WorkflowUnknownStage when the stage index is past the workflow's stages", async function () {
      const { registry } = await loadFixture(deployWithReferenceWorkflow);
      await expect(registry.stage(1n, 2))
        .to.be.revertedWithCustomError(registry, "WorkflowUnknownStage")
        .withArgs(1n, 2n);
    });

    it("reverts with WorkflowUnknown when the workflow is unknown", async function () {
      const { registry } = await loadFixture(deployWithReferenceWorkflow);
      await expect(registry.stage(3n, 0)).to.be.revertedWithCustomError(registry, "WorkflowUnknown").withArgs(3n);
    });
  });

  describe("activeWorkflowOf", function () {
    it("returns 0 for a type without a workflow", async function () {
      const { registry } = await loadFixture(deployWithReferenceWorkflow);
      expect(await registry.activeWorkflowOf(TRADE_LICENSE)).to.equal(0n);
      expect(await registry.activeWorkflowOf(BUILDING_PERMIT)).to.equal(1n);
    });
  });
});
