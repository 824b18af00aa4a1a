import { expect } from "chai";

import {
  BUILDING_PERMIT,
  code,
  COMMITMENT,
  deployWithReferenceWorkflow,
  ethers,
  networkHelpers,
  REFERENCE_STAGES,
  ROLES,
  sha,
  Status,
  timestampOf,
  TRADE_LICENSE,
  Validity,
  VALIDITY_SECONDS,
} from "./helpers/fixtures.ts";

const { loadFixture, time } = networkHelpers;

const TOKEN_ID = 1n;
const OTHER_TOKEN_ID = 2n;
const UNKNOWN_TOKEN_ID = 404n;
const MAX_TOKEN_ID = 2n ** 40n - 1n;
const WORKFLOW_ID = 1n;
const BASE_URI = "https://verify.example/";

// Reason codes used by the fixtures (any non-zero value works for the token).
const REJECTION_REASON = 2n;
const CANCEL_REASON = 3n;
const SUSPENSION_REASON = 7n;
const REVOCATION_REASON = 9n;

const STATUS_NAMES = Object.fromEntries(Object.entries(Status).map(([name, value]) => [value.toString(), name]));
const statusName = (status: bigint) => STATUS_NAMES[status.toString()];

/** The named fields of a `licence()` result, for deep comparison. */
function asRecord(record: {
  owner: string;
  status: bigint;
  reasonCode: bigint;
  workflowId: bigint;
  expiresAt: bigint;
}) {
  const { owner, status, reasonCode, workflowId, expiresAt } = record;
  return { owner, status, reasonCode, workflowId, expiresAt };
}

// ------------------------------------------------------------------------------------------------ fixtures

/**
 * A licence token wired, once, to an externally owned `registrySigner` standing in for the approval registry, so
 * the registry-only functions can be called directly; OPERATOR_ROLE and ADMIN_ROLE as on the platform, and
 * BUILDING_PERMIT active as workflow 1. `platformToken` and `registry` are the platform's own (reference workflow).
 */
async function deployTokenWithRegistrySigner() {
  const platform = await deployWithReferenceWorkflow();
  const { deployer, operator, admin } = platform;
  const registrySigner = platform.signers[12];
  const token = await ethers.deployContract("LicenceToken", [
    "Licence",
    "LIC",
    "https://verify.example/",
    deployer.address,
  ]);
  // Roles first: once wired, a grant asks the registry whether the grantee is a department wallet, and this
  // stand-in registry is a plain account.
  await token.grantRole(ROLES.OPERATOR, operator.address);
  await token.grantRole(ROLES.ADMIN, admin.address);
  await token.setApprovalRegistry(registrySigner.address);
  await token.connect(registrySigner).setActiveWorkflow(BUILDING_PERMIT, WORKFLOW_ID);
  return { ...platform, platformToken: platform.token, token, registrySigner };
}

async function deployDraftLicence() {
  const fixture = await deployTokenWithRegistrySigner();
  await fixture.token.connect(fixture.operator).mint(fixture.applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
  return { ...fixture, expiresAt: 0n };
}

async function deploySubmittedLicence() {
  const fixture = await deployDraftLicence();
  await fixture.token.connect(fixture.registrySigner).transition(TOKEN_ID, Status.Submitted, 0);
  return fixture;
}

async function deployPendingResubmissionLicence() {
  const fixture = await deploySubmittedLicence();
  await fixture.token.connect(fixture.registrySigner).transition(TOKEN_ID, Status.PendingResubmission, 0);
  return fixture;
}

async function deployRejectedLicence() {
  const fixture = await deploySubmittedLicence();
  await fixture.token.connect(fixture.registrySigner).transition(TOKEN_ID, Status.Rejected, REJECTION_REASON);
  return fixture;
}

async function deployCancelledLicence() {
  const fixture = await deployDraftLicence();
  await fixture.token.connect(fixture.registrySigner).transition(TOKEN_ID, Status.Cancelled, CANCEL_REASON);
  return fixture;
}

async function deployIssuedLicence() {
  const fixture = await deploySubmittedLicence();
  const expiresAt = BigInt(await time.latest()) + VALIDITY_SECONDS;
  await fixture.token.connect(fixture.registrySigner).issue(TOKEN_ID, expiresAt);
  return { ...fixture, expiresAt };
}

async function deployNeverExpiringLicence() {
  const fixture = await deploySubmittedLicence();
  await fixture.token.connect(fixture.registrySigner).issue(TOKEN_ID, 0);
  return { ...fixture, expiresAt: 0n };
}

async function deploySuspendedLicence() {
  const fixture = await deployIssuedLicence();
  await fixture.token.connect(fixture.admin).suspend(TOKEN_ID, SUSPENSION_REASON);
  return fixture;
}

async function deployRevokedLicence() {
  const fixture = await deployIssuedLicence();
  await fixture.token.connect(fixture.admin).revoke(TOKEN_ID, REVOCATION_REASON);
  return fixture;
}

/** Every stored status a token can be in, with the fixture that puts token 1 there and its reason code. */
const STATES = [
  { status: Status.Draft, fixture: deployDraftLicence, reasonCode: 0n },
  { status: Status.Submitted, fixture: deploySubmittedLicence, reasonCode: 0n },
  { status: Status.PendingResubmission, fixture: deployPendingResubmissionLicence, reasonCode: 0n },
  { status: Status.Approved, fixture: deployIssuedLicence, reasonCode: 0n },
  { status: Status.Rejected, fixture: deployRejectedLicence, reasonCode: REJECTION_REASON },
  { status: Status.Cancelled, fixture: deployCancelledLicence, reasonCode: CANCEL_REASON },
  { status: Status.Suspended, fixture: deploySuspendedLicence, reasonCode: SUSPENSION_REASON },
  { status: Status.Revoked, fixture: deployRevokedLicence, reasonCode: REVOCATION_REASON },
] as const;

/** The review transitions `transition` accepts (everything else reverts). */
const ALLOWED_TRANSITIONS: ReadonlyArray<readonly [bigint, bigint]> = [
  [Status.Draft, Status.Submitted],
  [Status.Draft, Status.Cancelled],
  [Status.Submitted, Status.PendingResubmission],
  [Status.Submitted, Status.Rejected],
  [Status.PendingResubmission, Status.Submitted],
  [Status.PendingResubmission, Status.Cancelled],
];
const isAllowed = (from: bigint, to: bigint) => ALLOWED_TRANSITIONS.some(([f, t]) => f === from && t === to);
const ALL_STATUSES = Object.values(Status);

const stateOf = (status: bigint) => STATES.find((state) => state.status === status)!;

// ------------------------------------------------------------------------------------------------ tests

describe("LicenceToken", function () {
  describe("deployment", function () {
    it("grants DEFAULT_ADMIN_ROLE to the admin passed to the constructor", async function () {
      const { token, deployer, stranger } = await loadFixture(deployTokenWithRegistrySigner);
      expect(await token.hasRole(ROLES.DEFAULT_ADMIN, deployer.address)).to.equal(true);
      expect(await token.hasRole(ROLES.DEFAULT_ADMIN, stranger.address)).to.equal(false);
    });

    it("has every role administered by DEFAULT_ADMIN_ROLE", async function () {
      const { token } = await loadFixture(deployTokenWithRegistrySigner);
      for (const role of Object.values(ROLES)) {
        expect(await token.getRoleAdmin(role)).to.equal(ROLES.DEFAULT_ADMIN);
      }
    });

    it("is wired to the approval registry, with OPERATOR_ROLE for the operator and ADMIN_ROLE for the admin", async function () {
      const { platformToken, registry, operator, admin } = await loadFixture(deployTokenWithRegistrySigner);
      expect(await platformToken.approvalRegistry()).to.equal(await registry.getAddress());
      expect(await platformToken.hasRole(ROLES.OPERATOR, operator.address)).to.equal(true);
      expect(await platformToken.hasRole(ROLES.ADMIN, admin.address)).to.equal(true);
    });

    it("emits BaseURISet with the base URI passed to the constructor", async function () {
      const { deployer } = await loadFixture(deployTokenWithRegistrySigner);
      const token = await ethers.deployContract("LicenceToken", [
        "Licence",
        "LIC",
        "https://v.example/",
        deployer.address,
      ]);
      await expect(token.deploymentTransaction()).to.emit(token, "BaseURISet").withArgs("https://v.example/");
    });
  });

  describe("access control", function () {
    describe("grantRole", function () {
      it("emits RoleGranted when called by DEFAULT_ADMIN_ROLE", async function () {
        const { token, deployer, stranger } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(deployer).grantRole(ROLES.OPERATOR, stranger.address))
          .to.emit(token, "RoleGranted")
          .withArgs(ROLES.OPERATOR, stranger.address, deployer.address);
        expect(await token.hasRole(ROLES.OPERATOR, stranger.address)).to.equal(true);
      });

      it("reverts with AccessControlUnauthorizedAccount when the caller lacks DEFAULT_ADMIN_ROLE", async function () {
        const { token, admin, stranger } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(admin).grantRole(ROLES.OPERATOR, stranger.address))
          .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
          .withArgs(admin.address, ROLES.DEFAULT_ADMIN);
      });
    });

    describe("revokeRole", function () {
      it("emits RoleRevoked and removes the role", async function () {
        const { token, deployer, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(deployer).revokeRole(ROLES.OPERATOR, operator.address))
          .to.emit(token, "RoleRevoked")
          .withArgs(ROLES.OPERATOR, operator.address, deployer.address);
        await expect(token.connect(operator).mint(operator.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
          .withArgs(operator.address, ROLES.OPERATOR);
      });

      it("reverts with AccessControlUnauthorizedAccount when the caller lacks DEFAULT_ADMIN_ROLE", async function () {
        const { token, stranger, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(stranger).revokeRole(ROLES.OPERATOR, operator.address))
          .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
          .withArgs(stranger.address, ROLES.DEFAULT_ADMIN);
      });
    });

    describe("renounceRole", function () {
      it("emits RoleRevoked when an account renounces its own role", async function () {
        const { token, admin } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(admin).renounceRole(ROLES.ADMIN, admin.address))
          .to.emit(token, "RoleRevoked")
          .withArgs(ROLES.ADMIN, admin.address, admin.address);
        expect(await token.hasRole(ROLES.ADMIN, admin.address)).to.equal(false);
      });

      it("reverts with AccessControlBadConfirmation for another account", async function () {
        const { token, admin, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(admin).renounceRole(ROLES.OPERATOR, operator.address))
          .to.be.revertedWithCustomError(token, "AccessControlBadConfirmation")
          .withArgs();
      });
    });
  });

  describe("mint", function () {
    describe("when the caller has OPERATOR_ROLE", function () {
      it("emits Transfer from the zero address, Locked and LicenceMinted", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        const tx = await token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        await expect(tx).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, applicant.address, TOKEN_ID);
        await expect(tx).to.emit(token, "Locked").withArgs(TOKEN_ID);
        await expect(tx).to.emit(token, "LicenceMinted").withArgs(TOKEN_ID, applicant.address, WORKFLOW_ID, COMMITMENT);
      });

      it("stores a Draft record pinned to the active workflow", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        await token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        expect(asRecord(await token.licence(TOKEN_ID))).to.deep.equal({
          owner: applicant.address,
          status: Status.Draft,
          reasonCode: 0n,
          workflowId: WORKFLOW_ID,
          expiresAt: 0n,
        });
      });

      it("assigns ownership and increments the owner's balance", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        expect(await token.balanceOf(applicant.address)).to.equal(0n);
        await token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        expect(await token.ownerOf(TOKEN_ID)).to.equal(applicant.address);
        expect(await token.balanceOf(applicant.address)).to.equal(1n);
        await token.connect(operator).mint(applicant.address, OTHER_TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        expect(await token.balanceOf(applicant.address)).to.equal(2n);
      });

      it("accepts the largest token id, 2^40 - 1", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).mint(applicant.address, MAX_TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.emit(token, "LicenceMinted")
          .withArgs(MAX_TOKEN_ID, applicant.address, WORKFLOW_ID, COMMITMENT);
        expect(await token.ownerOf(MAX_TOKEN_ID)).to.equal(applicant.address);
      });

      it("pins new requests to the workflow active at mint time and keeps existing ones pinned", async function () {
        const { token, operator, applicant, registrySigner } = await loadFixture(deployTokenWithRegistrySigner);
        await token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        await token.connect(registrySigner).setActiveWorkflow(BUILDING_PERMIT, 7);
        await expect(token.connect(operator).mint(applicant.address, OTHER_TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.emit(token, "LicenceMinted")
          .withArgs(OTHER_TOKEN_ID, applicant.address, 7n, COMMITMENT);
        expect((await token.licence(TOKEN_ID)).workflowId).to.equal(WORKFLOW_ID);
        expect((await token.licence(OTHER_TOKEN_ID)).workflowId).to.equal(7n);
      });

      it("reverts with ERC721InvalidReceiver when minting to the zero address", async function () {
        const { token, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).mint(ethers.ZeroAddress, TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "ERC721InvalidReceiver")
          .withArgs(ethers.ZeroAddress);
      });

      it("reverts with LicenceInvalidTokenId for token id 0", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).mint(applicant.address, 0n, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "LicenceInvalidTokenId")
          .withArgs(0n);
      });

      it("reverts with LicenceInvalidTokenId for token id 2^40", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).mint(applicant.address, MAX_TOKEN_ID + 1n, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "LicenceInvalidTokenId")
          .withArgs(MAX_TOKEN_ID + 1n);
      });

      it("reverts with LicenceAlreadyExists for a token id already minted", async function () {
        const { token, operator, applicant, stranger } = await loadFixture(deployDraftLicence);
        await expect(token.connect(operator).mint(stranger.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "LicenceAlreadyExists")
          .withArgs(TOKEN_ID);
        expect(await token.ownerOf(TOKEN_ID)).to.equal(applicant.address);
      });

      it("reverts with LicenceNoActiveWorkflow for a request type without a workflow", async function () {
        const { token, operator, applicant } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).mint(applicant.address, TOKEN_ID, TRADE_LICENSE, COMMITMENT))
          .to.be.revertedWithCustomError(token, "LicenceNoActiveWorkflow")
          .withArgs(TRADE_LICENSE);
      });

      it("reverts with LicenceNoActiveWorkflow once the request type's workflow is deactivated", async function () {
        const {
          platformToken: token,
          registry,
          operator,
          admin,
          applicant,
        } = await loadFixture(deployTokenWithRegistrySigner);
        await registry.connect(admin).deactivateWorkflow(WORKFLOW_ID);
        await expect(token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "LicenceNoActiveWorkflow")
          .withArgs(BUILDING_PERMIT);
      });
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller lacks OPERATOR_ROLE", async function () {
      const { token, admin, stranger, applicant, registrySigner } = await loadFixture(deployTokenWithRegistrySigner);
      for (const caller of [stranger, admin, applicant, registrySigner]) {
        await expect(token.connect(caller).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.OPERATOR);
      }
    });
  });

  describe("ERC-721 reads", function () {
    it("name, symbol, balanceOf, ownerOf, getApproved and isApprovedForAll answer for a soulbound licence", async function () {
      const { token, applicant, operator, stranger } = await loadFixture(deployDraftLicence);
      expect([await token.name(), await token.symbol()]).to.deep.equal(["Licence", "LIC"]);
      expect(await token.balanceOf(stranger.address)).to.equal(0n);
      expect(await token.balanceOf(applicant.address)).to.equal(1n);
      expect(await token.ownerOf(TOKEN_ID)).to.equal(applicant.address);
      expect(await token.getApproved(TOKEN_ID)).to.equal(ethers.ZeroAddress);
      for (const other of [operator, stranger, applicant])
        expect(await token.isApprovedForAll(applicant.address, other.address)).to.equal(false);
      await expect(token.balanceOf(ethers.ZeroAddress))
        .to.be.revertedWithCustomError(token, "ERC721InvalidOwner")
        .withArgs(ethers.ZeroAddress);
    });

    it("ownerOf, tokenURI, getApproved and locked revert with ERC721NonexistentToken for an unknown token", async function () {
      const { token } = await loadFixture(deployDraftLicence);
      for (const read of [token.ownerOf, token.tokenURI, token.getApproved, token.locked]) {
        await expect(read(UNKNOWN_TOKEN_ID))
          .to.be.revertedWithCustomError(token, "ERC721NonexistentToken")
          .withArgs(UNKNOWN_TOKEN_ID);
      }
    });

    it("tokenURI is the base URI followed by the decimal token id, every digit of the largest, after setBaseURI too", async function () {
      const { token, admin, operator, applicant } = await loadFixture(deployDraftLicence);
      expect(await token.tokenURI(TOKEN_ID)).to.equal(`${BASE_URI}1`);
      await token.connect(operator).mint(applicant.address, MAX_TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
      expect(await token.tokenURI(MAX_TOKEN_ID)).to.equal(`${BASE_URI}1099511627775`);
      await token.connect(admin).setBaseURI("https://licences.example/v/");
      expect(await token.tokenURI(TOKEN_ID)).to.equal("https://licences.example/v/1");
      // An empty base URI: an empty string.
      await token.connect(admin).setBaseURI("");
      expect(await token.tokenURI(TOKEN_ID)).to.equal("");
    });
  });

  describe("soulbound", function () {
    it("transferFrom, both safeTransferFrom and approve revert with LicenceSoulbound, even for the owner", async function () {
      const { token, applicant, stranger } = await loadFixture(deployDraftLicence);
      const asOwner = token.connect(applicant);
      const transfer = (id: bigint) => asOwner.transferFrom(applicant.address, stranger.address, id);
      const attempts = [
        () => transfer(TOKEN_ID),
        () => asOwner["safeTransferFrom(address,address,uint256)"](applicant.address, stranger.address, TOKEN_ID),
        () =>
          asOwner["safeTransferFrom(address,address,uint256,bytes)"](
            applicant.address,
            stranger.address,
            TOKEN_ID,
            "0x1234",
          ),
        () => asOwner.approve(stranger.address, TOKEN_ID),
      ];
      for (const attempt of attempts)
        await expect(attempt()).to.be.revertedWithCustomError(token, "LicenceSoulbound").withArgs(TOKEN_ID);
      expect(await token.ownerOf(TOKEN_ID)).to.equal(applicant.address);
      expect(await token.getApproved(TOKEN_ID)).to.equal(ethers.ZeroAddress);
      // An unknown token is refused the same way.
      await expect(transfer(UNKNOWN_TOKEN_ID))
        .to.be.revertedWithCustomError(token, "LicenceSoulbound")
        .withArgs(UNKNOWN_TOKEN_ID);
    });

    it("setApprovalForAll reverts with LicenceSoulboundOperator, naming the operator", async function () {
      const { token, applicant, stranger } = await loadFixture(deployDraftLicence);
      for (const approved of [true, false]) {
        await expect(token.connect(applicant).setApprovalForAll(stranger.address, approved))
          .to.be.revertedWithCustomError(token, "LicenceSoulboundOperator")
          .withArgs(stranger.address);
      }
      expect(await token.isApprovedForAll(applicant.address, stranger.address)).to.equal(false);
    });

    it("locked returns true for a licence in every status", async function () {
      for (const state of STATES) {
        const { token } = await loadFixture(state.fixture);
        expect(await token.locked(TOKEN_ID), statusName(state.status)).to.equal(true);
      }
    });
  });

  describe("supportsInterface", function () {
    const SUPPORTED = {
      "ERC-721": "0x80ac58cd",
      "ERC-721 metadata": "0x5b5e139f",
      "ERC-5192": "0xb45a3c0e",
      "ERC-165": "0x01ffc9a7",
      AccessControl: "0x7965db0b",
    };
    for (const [name, interfaceId] of Object.entries(SUPPORTED)) {
      it(`returns true for ${name} (${interfaceId})`, async function () {
        const { token } = await loadFixture(deployTokenWithRegistrySigner);
        expect(await token.supportsInterface(interfaceId)).to.equal(true);
      });
    }

    it("returns false for 0xffffffff", async function () {
      const { token } = await loadFixture(deployTokenWithRegistrySigner);
      expect(await token.supportsInterface("0xffffffff")).to.equal(false);
    });

    it("returns false for ERC-721 enumerable (0x780e9d63)", async function () {
      const { token } = await loadFixture(deployTokenWithRegistrySigner);
      expect(await token.supportsInterface("0x780e9d63")).to.equal(false);
    });
  });

  describe("transition", function () {
    describe("when the caller is not the approval registry", function () {
      it("reverts with LicenceUnauthorizedRegistry (DEFAULT_ADMIN_ROLE, admin, operator, a department, anyone)", async function () {
        const { token, deployer, admin, operator, stranger, departments } = await loadFixture(deployDraftLicence);
        for (const caller of [deployer, admin, operator, departments.A, stranger]) {
          await expect(token.connect(caller).transition(TOKEN_ID, Status.Submitted, 0))
            .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
            .withArgs(caller.address);
        }
      });

      it("reverts with LicenceUnauthorizedRegistry even after DEFAULT_ADMIN_ROLE grants the caller every role", async function () {
        const { token, deployer, stranger } = await loadFixture(deployDraftLicence);
        for (const role of Object.values(ROLES)) await token.connect(deployer).grantRole(role, stranger.address);
        await expect(token.connect(stranger).transition(TOKEN_ID, Status.Submitted, 0))
          .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
          .withArgs(stranger.address);
      });
    });

    it("reverts with ERC721NonexistentToken when the token does not exist", async function () {
      const { token, registrySigner } = await loadFixture(deployDraftLicence);
      await expect(token.connect(registrySigner).transition(UNKNOWN_TOKEN_ID, Status.Submitted, 0))
        .to.be.revertedWithCustomError(token, "ERC721NonexistentToken")
        .withArgs(UNKNOWN_TOKEN_ID);
    });

    describe("when the transition is part of the review lifecycle", function () {
      for (const [from, to] of ALLOWED_TRANSITIONS) {
        it(`moves ${statusName(from)} -> ${statusName(to)} and emits LicenceStatusChanged`, async function () {
          const { token, registrySigner } = await loadFixture(stateOf(from).fixture);
          const reasonCode = 5n;
          await expect(token.connect(registrySigner).transition(TOKEN_ID, to, reasonCode))
            .to.emit(token, "LicenceStatusChanged")
            .withArgs(TOKEN_ID, from, to, reasonCode, registrySigner.address);
          const record = await token.licence(TOKEN_ID);
          expect(record.status).to.equal(to);
          expect(record.reasonCode).to.equal(reasonCode);
        });
      }

      it("returns the pinned workflow id", async function () {
        const { token, registrySigner } = await loadFixture(deployDraftLicence);
        await token.connect(registrySigner).setActiveWorkflow(BUILDING_PERMIT, 9);
        expect(await token.connect(registrySigner).transition.staticCall(TOKEN_ID, Status.Submitted, 0)).to.equal(
          WORKFLOW_ID,
        );
      });

      it("overwrites the reason code with the new one", async function () {
        const { token, registrySigner } = await loadFixture(deployPendingResubmissionLicence);
        await token.connect(registrySigner).transition(TOKEN_ID, Status.Submitted, 0);
        await token.connect(registrySigner).transition(TOKEN_ID, Status.Rejected, 4);
        expect((await token.licence(TOKEN_ID)).reasonCode).to.equal(4n);
      });

      it("records the approval registry as actor when the registry drives it", async function () {
        const { platformToken: token, registry, operator, applicant } = await loadFixture(deployDraftLicence);
        await token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        await expect(registry.connect(operator).submit(TOKEN_ID))
          .to.emit(token, "LicenceStatusChanged")
          .withArgs(TOKEN_ID, Status.Draft, Status.Submitted, 0n, await registry.getAddress());
      });
    });

    describe("when the transition is not part of the review lifecycle", function () {
      for (const state of STATES) {
        for (const to of ALL_STATUSES) {
          if (isAllowed(state.status, to)) continue;
          it(`reverts with LicenceInvalidTransition for ${statusName(state.status)} -> ${statusName(to)}`, async function () {
            const { token, registrySigner } = await loadFixture(state.fixture);
            await expect(token.connect(registrySigner).transition(TOKEN_ID, to, 1))
              .to.be.revertedWithCustomError(token, "LicenceInvalidTransition")
              .withArgs(TOKEN_ID, state.status, to);
          });
        }
      }
    });
  });

  describe("issue", function () {
    describe("when the caller is not the approval registry", function () {
      it("reverts with LicenceUnauthorizedRegistry (DEFAULT_ADMIN_ROLE, admin, operator, a department, anyone)", async function () {
        const { token, deployer, admin, operator, stranger, departments } = await loadFixture(deploySubmittedLicence);
        for (const caller of [deployer, admin, operator, departments.A, stranger]) {
          await expect(token.connect(caller).issue(TOKEN_ID, 0))
            .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
            .withArgs(caller.address);
        }
      });

      it("reverts with LicenceUnauthorizedRegistry even after DEFAULT_ADMIN_ROLE grants the caller every role", async function () {
        const { token, deployer, stranger } = await loadFixture(deploySubmittedLicence);
        for (const role of Object.values(ROLES)) await token.connect(deployer).grantRole(role, stranger.address);
        await expect(token.connect(stranger).issue(TOKEN_ID, 0))
          .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
          .withArgs(stranger.address);
      });
    });

    it("reverts with ERC721NonexistentToken when the token does not exist", async function () {
      const { token, registrySigner } = await loadFixture(deploySubmittedLicence);
      await expect(token.connect(registrySigner).issue(UNKNOWN_TOKEN_ID, 0))
        .to.be.revertedWithCustomError(token, "ERC721NonexistentToken")
        .withArgs(UNKNOWN_TOKEN_ID);
    });

    describe("when the licence is not Submitted", function () {
      for (const state of STATES.filter((s) => s.status !== Status.Submitted)) {
        it(`reverts with LicenceInvalidTransition from ${statusName(state.status)}`, async function () {
          const { token, registrySigner } = await loadFixture(state.fixture);
          await expect(token.connect(registrySigner).issue(TOKEN_ID, 0))
            .to.be.revertedWithCustomError(token, "LicenceInvalidTransition")
            .withArgs(TOKEN_ID, state.status, Status.Approved);
        });
      }
    });

    describe("when the licence is Submitted", function () {
      it("emits LicenceStatusChanged and LicenceIssued with the block's timestamp", async function () {
        const { token, registrySigner } = await loadFixture(deploySubmittedLicence);
        const expiresAt = BigInt(await time.latest()) + VALIDITY_SECONDS;
        const tx = await token.connect(registrySigner).issue(TOKEN_ID, expiresAt);
        const issuedAt = await timestampOf(tx);
        await expect(tx)
          .to.emit(token, "LicenceStatusChanged")
          .withArgs(TOKEN_ID, Status.Submitted, Status.Approved, 0n, registrySigner.address);
        await expect(tx).to.emit(token, "LicenceIssued").withArgs(TOKEN_ID, issuedAt, expiresAt);
      });

      it("stores Approved, the expiry and clears the reason code", async function () {
        const { token, registrySigner, applicant } = await loadFixture(deployDraftLicence);
        await token.connect(registrySigner).transition(TOKEN_ID, Status.Submitted, 6);
        const expiresAt = BigInt(await time.latest()) + VALIDITY_SECONDS;
        await token.connect(registrySigner).issue(TOKEN_ID, expiresAt);
        expect(asRecord(await token.licence(TOKEN_ID))).to.deep.equal({
          owner: applicant.address,
          status: Status.Approved,
          reasonCode: 0n,
          workflowId: WORKFLOW_ID,
          expiresAt,
        });
      });

      it("accepts an expiry of 0 (never expires)", async function () {
        const { token, registrySigner } = await loadFixture(deploySubmittedLicence);
        const tx = await token.connect(registrySigner).issue(TOKEN_ID, 0);
        await expect(tx)
          .to.emit(token, "LicenceIssued")
          .withArgs(TOKEN_ID, await timestampOf(tx), 0n);
        expect((await token.licence(TOKEN_ID)).expiresAt).to.equal(0n);
        expect((await token.validityOf(TOKEN_ID)).validity).to.equal(Validity.Valid);
      });

      it("accepts an expiry one second after the block's timestamp", async function () {
        const { token, registrySigner } = await loadFixture(deploySubmittedLicence);
        const issuedAt = BigInt(await time.latest()) + 100n;
        await time.setNextBlockTimestamp(issuedAt);
        await expect(token.connect(registrySigner).issue(TOKEN_ID, issuedAt + 1n))
          .to.emit(token, "LicenceIssued")
          .withArgs(TOKEN_ID, issuedAt, issuedAt + 1n);
      });

      it("reverts with LicenceInvalidExpiry for an expiry in the past", async function () {
        const { token, registrySigner } = await loadFixture(deploySubmittedLicence);
        const expiresAt = BigInt(await time.latest()) - 1n;
        await expect(token.connect(registrySigner).issue(TOKEN_ID, expiresAt))
          .to.be.revertedWithCustomError(token, "LicenceInvalidExpiry")
          .withArgs(TOKEN_ID, expiresAt);
      });

      it("reverts with LicenceInvalidExpiry for an expiry equal to the block's timestamp", async function () {
        const { token, registrySigner } = await loadFixture(deploySubmittedLicence);
        const issuedAt = BigInt(await time.latest()) + 100n;
        await time.setNextBlockTimestamp(issuedAt);
        await expect(token.connect(registrySigner).issue(TOKEN_ID, issuedAt))
          .to.be.revertedWithCustomError(token, "LicenceInvalidExpiry")
          .withArgs(TOKEN_ID, issuedAt);
      });
    });
  });

  /** The administration's status changes: each applies only from the statuses `from`, and sets `to`. */
  type Token = Awaited<ReturnType<typeof deployIssuedLicence>>["token"];
  const ADMIN_CHANGES = [
    {
      name: "suspend",
      call: (token: Token, id: bigint) => token.suspend(id, SUSPENSION_REASON),
      fixture: deployIssuedLicence,
      from: [Status.Approved],
      to: Status.Suspended,
      more() {
        it("reverts with LicenceReasonRequired when the reason code is 0", async function () {
          const { token, admin } = await loadFixture(deployIssuedLicence);
          await expect(token.connect(admin).suspend(TOKEN_ID, 0))
            .to.be.revertedWithCustomError(token, "LicenceReasonRequired")
            .withArgs(TOKEN_ID);
        });

        it("emits LicenceStatusChanged and stores Suspended with the reason, keeping the expiry when the licence is Approved", async function () {
          const { token, admin, expiresAt } = await loadFixture(deployIssuedLicence);
          await expect(token.connect(admin).suspend(TOKEN_ID, SUSPENSION_REASON))
            .to.emit(token, "LicenceStatusChanged")
            .withArgs(TOKEN_ID, Status.Approved, Status.Suspended, SUSPENSION_REASON, admin.address);
          const record = await token.licence(TOKEN_ID);
          expect([record.status, record.reasonCode, record.expiresAt]).to.deep.equal([
            Status.Suspended,
            SUSPENSION_REASON,
            expiresAt,
          ]);
        });
      },
    },
    {
      name: "reinstate",
      call: (token: Token, id: bigint) => token.reinstate(id),
      fixture: deploySuspendedLicence,
      from: [Status.Suspended],
      to: Status.Approved,
      more() {
        it("emits LicenceStatusChanged, stores Approved and clears the reason, keeping the expiry when the licence is Suspended", async function () {
          const { token, admin, expiresAt } = await loadFixture(deploySuspendedLicence);
          await expect(token.connect(admin).reinstate(TOKEN_ID))
            .to.emit(token, "LicenceStatusChanged")
            .withArgs(TOKEN_ID, Status.Suspended, Status.Approved, 0n, admin.address);
          const record = await token.licence(TOKEN_ID);
          expect([record.status, record.reasonCode, record.expiresAt]).to.deep.equal([Status.Approved, 0n, expiresAt]);
          expect((await token.validityOf(TOKEN_ID)).validity).to.equal(Validity.Valid);
        });
      },
    },
    {
      name: "revoke",
      call: (token: Token, id: bigint) => token.revoke(id, REVOCATION_REASON),
      fixture: deployIssuedLicence,
      from: [Status.Approved, Status.Suspended],
      to: Status.Revoked,
      more() {
        it("reverts with LicenceReasonRequired when the reason code is 0, for an Approved or a Suspended licence", async function () {
          for (const fixture of [deployIssuedLicence, deploySuspendedLicence]) {
            const { token, admin } = await loadFixture(fixture);
            await expect(token.connect(admin).revoke(TOKEN_ID, 0))
              .to.be.revertedWithCustomError(token, "LicenceReasonRequired")
              .withArgs(TOKEN_ID);
          }
        });

        it("emits LicenceStatusChanged and stores Revoked with the reason when the licence is Approved", async function () {
          const { token, admin, expiresAt } = await loadFixture(deployIssuedLicence);
          await expect(token.connect(admin).revoke(TOKEN_ID, REVOCATION_REASON))
            .to.emit(token, "LicenceStatusChanged")
            .withArgs(TOKEN_ID, Status.Approved, Status.Revoked, REVOCATION_REASON, admin.address);
          const record = await token.licence(TOKEN_ID);
          expect([record.status, record.reasonCode, record.expiresAt]).to.deep.equal([
            Status.Revoked,
            REVOCATION_REASON,
            expiresAt,
          ]);
        });

        it("emits LicenceStatusChanged from Suspended and stores Revoked with the new reason when the licence is Suspended", async function () {
          const { token, admin } = await loadFixture(deploySuspendedLicence);
          await expect(token.connect(admin).revoke(TOKEN_ID, REVOCATION_REASON))
            .to.emit(token, "LicenceStatusChanged")
            .withArgs(TOKEN_ID, Status.Suspended, Status.Revoked, REVOCATION_REASON, admin.address);
          const record = await token.licence(TOKEN_ID);
          expect([record.status, record.reasonCode]).to.deep.equal([Status.Revoked, REVOCATION_REASON]);
        });
      },
    },
  ];

  for (const change of ADMIN_CHANGES) {
    describe(change.name, function () {
      it("reverts with AccessControlUnauthorizedAccount when the caller lacks ADMIN_ROLE", async function () {
        const { token, deployer, operator, stranger, registrySigner } = await loadFixture(change.fixture);
        for (const caller of [deployer, operator, stranger, registrySigner]) {
          await expect(change.call(token.connect(caller), TOKEN_ID))
            .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
            .withArgs(caller.address, ROLES.ADMIN);
        }
      });

      it("reverts with ERC721NonexistentToken when the token does not exist", async function () {
        const { token, admin } = await loadFixture(change.fixture);
        await expect(change.call(token.connect(admin), UNKNOWN_TOKEN_ID))
          .to.be.revertedWithCustomError(token, "ERC721NonexistentToken")
          .withArgs(UNKNOWN_TOKEN_ID);
      });

      it("reverts with LicenceInvalidTransition from every other status", async function () {
        for (const state of STATES.filter((s) => !change.from.includes(s.status))) {
          const { token, admin } = await loadFixture(state.fixture);
          await expect(change.call(token.connect(admin), TOKEN_ID), statusName(state.status))
            .to.be.revertedWithCustomError(token, "LicenceInvalidTransition")
            .withArgs(TOKEN_ID, state.status, change.to);
        }
      });

      change.more();
    });
  }

  describe("setActiveWorkflow", function () {
    describe("when the caller is not the approval registry", function () {
      it("reverts with LicenceUnauthorizedRegistry (DEFAULT_ADMIN_ROLE, admin, operator, a department, anyone)", async function () {
        const { token, deployer, admin, operator, stranger, departments } =
          await loadFixture(deployTokenWithRegistrySigner);
        for (const caller of [deployer, admin, operator, departments.A, stranger]) {
          await expect(token.connect(caller).setActiveWorkflow(TRADE_LICENSE, 2))
            .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
            .withArgs(caller.address);
        }
      });

      it("reverts with LicenceUnauthorizedRegistry even after DEFAULT_ADMIN_ROLE grants the caller every role", async function () {
        const { token, deployer, stranger } = await loadFixture(deployTokenWithRegistrySigner);
        for (const role of Object.values(ROLES)) await token.connect(deployer).grantRole(role, stranger.address);
        await expect(token.connect(stranger).setActiveWorkflow(TRADE_LICENSE, 2))
          .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
          .withArgs(stranger.address);
      });
    });

    describe("when the caller is the approval registry", function () {
      it("emits ActiveWorkflowSet and updates activeWorkflowOf", async function () {
        const { token, registrySigner } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(registrySigner).setActiveWorkflow(TRADE_LICENSE, 2))
          .to.emit(token, "ActiveWorkflowSet")
          .withArgs(TRADE_LICENSE, 2n);
        expect(await token.activeWorkflowOf(TRADE_LICENSE)).to.equal(2n);
      });

      it("lets new requests of the type be minted", async function () {
        const { token, operator, applicant, registrySigner } = await loadFixture(deployTokenWithRegistrySigner);
        await token.connect(registrySigner).setActiveWorkflow(TRADE_LICENSE, 2);
        await expect(token.connect(operator).mint(applicant.address, TOKEN_ID, TRADE_LICENSE, COMMITMENT))
          .to.emit(token, "LicenceMinted")
          .withArgs(TOKEN_ID, applicant.address, 2n, COMMITMENT);
      });

      it("disables minting of the type when set to 0", async function () {
        const { token, operator, applicant, registrySigner } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(registrySigner).setActiveWorkflow(BUILDING_PERMIT, 0))
          .to.emit(token, "ActiveWorkflowSet")
          .withArgs(BUILDING_PERMIT, 0n);
        expect(await token.activeWorkflowOf(BUILDING_PERMIT)).to.equal(0n);
        await expect(token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT))
          .to.be.revertedWithCustomError(token, "LicenceNoActiveWorkflow")
          .withArgs(BUILDING_PERMIT);
      });

      it("is called by the approval registry when it registers a workflow", async function () {
        const { platformToken, registry, admin } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(registry.connect(admin).registerWorkflow(TRADE_LICENSE, ethers.id("trade"), 0, REFERENCE_STAGES))
          .to.emit(platformToken, "ActiveWorkflowSet")
          .withArgs(TRADE_LICENSE, 2n);
      });
    });
  });

  describe("setApprovalRegistry", function () {
    it("wires the approval registry once and emits ApprovalRegistrySet", async function () {
      const { deployer, registrySigner } = await loadFixture(deployTokenWithRegistrySigner);
      const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "", deployer.address]);
      expect(await token.approvalRegistry()).to.equal(ethers.ZeroAddress);
      await expect(token.connect(deployer).setApprovalRegistry(registrySigner.address))
        .to.emit(token, "ApprovalRegistrySet")
        .withArgs(registrySigner.address);
      expect(await token.approvalRegistry()).to.equal(registrySigner.address);
    });

    it("reverts with LicenceApprovalRegistryFixed, even for DEFAULT_ADMIN_ROLE when the approval registry is already set", async function () {
      const { platformToken, registry, deployer, stranger } = await loadFixture(deployTokenWithRegistrySigner);
      for (const next of [stranger.address, deployer.address, await registry.getAddress()]) {
        await expect(platformToken.connect(deployer).setApprovalRegistry(next))
          .to.be.revertedWithCustomError(platformToken, "LicenceApprovalRegistryFixed")
          .withArgs(await registry.getAddress());
      }
    });

    it("reverts with LicenceApprovalRegistryFixed when the address is zero", async function () {
      const { deployer } = await loadFixture(deployTokenWithRegistrySigner);
      const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "", deployer.address]);
      await expect(token.connect(deployer).setApprovalRegistry(ethers.ZeroAddress))
        .to.be.revertedWithCustomError(token, "LicenceApprovalRegistryFixed")
        .withArgs(ethers.ZeroAddress);
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller lacks DEFAULT_ADMIN_ROLE", async function () {
      const { deployer, admin, operator } = await loadFixture(deployTokenWithRegistrySigner);
      const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "", deployer.address]);
      for (const caller of [admin, operator]) {
        await expect(token.connect(caller).setApprovalRegistry(caller.address))
          .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.DEFAULT_ADMIN);
      }
    });
  });

  describe("setBaseURI", function () {
    describe("when the caller lacks ADMIN_ROLE", function () {
      it("reverts with AccessControlUnauthorizedAccount", async function () {
        const { token, deployer, operator, stranger, registrySigner } = await loadFixture(deployDraftLicence);
        for (const caller of [deployer, operator, stranger, registrySigner]) {
          await expect(token.connect(caller).setBaseURI("https://evil.example/"))
            .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
            .withArgs(caller.address, ROLES.ADMIN);
        }
        expect(await token.tokenURI(TOKEN_ID)).to.equal(`${BASE_URI}1`);
      });
    });

    it("emits BaseURISet and changes tokenURI when the caller has ADMIN_ROLE", async function () {
      const { token, admin } = await loadFixture(deployDraftLicence);
      await expect(token.connect(admin).setBaseURI("https://licences.example/v/"))
        .to.emit(token, "BaseURISet")
        .withArgs("https://licences.example/v/");
      expect(await token.tokenURI(TOKEN_ID)).to.equal("https://licences.example/v/1");
    });
  });

  describe("validityOf", function () {
    it("returns Unknown and zeros for a token that does not exist", async function () {
      const { token } = await loadFixture(deployDraftLicence);
      expect(await token.validityOf(UNKNOWN_TOKEN_ID)).to.deep.equal([Validity.Unknown, Status.None, 0n, 0n]);
    });

    for (const status of [
      Status.Draft,
      Status.Submitted,
      Status.PendingResubmission,
      Status.Rejected,
      Status.Cancelled,
    ]) {
      it(`returns NotIssued for a ${statusName(status)} request`, async function () {
        const state = stateOf(status);
        const { token } = await loadFixture(state.fixture);
        expect(await token.validityOf(TOKEN_ID)).to.deep.equal([Validity.NotIssued, status, state.reasonCode, 0n]);
      });
    }

    it("returns Valid for an issued licence before its expiry", async function () {
      const { token, expiresAt } = await loadFixture(deployIssuedLicence);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([Validity.Valid, Status.Approved, 0n, expiresAt]);
    });

    it("returns Valid shortly before the expiry", async function () {
      const { token, expiresAt } = await loadFixture(deployIssuedLicence);
      await time.increaseTo(expiresAt - 60n);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([Validity.Valid, Status.Approved, 0n, expiresAt]);
    });

    it("returns Expired once block time reaches the expiry", async function () {
      const { token, expiresAt } = await loadFixture(deployIssuedLicence);
      await time.increaseTo(expiresAt);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([Validity.Expired, Status.Approved, 0n, expiresAt]);
    });

    it("returns Expired after time passes the expiry", async function () {
      const { token, expiresAt } = await loadFixture(deployIssuedLicence);
      await time.increase(VALIDITY_SECONDS + 3600n);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([Validity.Expired, Status.Approved, 0n, expiresAt]);
    });

    it("returns Valid for a licence that never expires, however late", async function () {
      const { token } = await loadFixture(deployNeverExpiringLicence);
      await time.increase(100n * VALIDITY_SECONDS);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([Validity.Valid, Status.Approved, 0n, 0n]);
    });

    it("returns Suspended with the suspension reason", async function () {
      const { token, expiresAt } = await loadFixture(deploySuspendedLicence);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([
        Validity.Suspended,
        Status.Suspended,
        SUSPENSION_REASON,
        expiresAt,
      ]);
    });

    it("returns Suspended rather than Expired for a suspended licence past its expiry", async function () {
      const { token, expiresAt } = await loadFixture(deploySuspendedLicence);
      await time.increase(VALIDITY_SECONDS + 3600n);
      expect((await token.validityOf(TOKEN_ID)).validity).to.equal(Validity.Suspended);
      expect((await token.validityOf(TOKEN_ID)).expiresAt).to.equal(expiresAt);
    });

    it("returns Revoked with the revocation reason", async function () {
      const { token, expiresAt } = await loadFixture(deployRevokedLicence);
      expect(await token.validityOf(TOKEN_ID)).to.deep.equal([
        Validity.Revoked,
        Status.Revoked,
        REVOCATION_REASON,
        expiresAt,
      ]);
    });

    it("returns Revoked rather than Expired for a revoked licence past its expiry", async function () {
      const { token } = await loadFixture(deployRevokedLicence);
      await time.increase(VALIDITY_SECONDS + 3600n);
      expect((await token.validityOf(TOKEN_ID)).validity).to.equal(Validity.Revoked);
    });
  });

  describe("licence", function () {
    it("returns the packed record of a Draft request", async function () {
      const { token, applicant } = await loadFixture(deployDraftLicence);
      expect(asRecord(await token.licence(TOKEN_ID))).to.deep.equal({
        owner: applicant.address,
        status: Status.Draft,
        reasonCode: 0n,
        workflowId: WORKFLOW_ID,
        expiresAt: 0n,
      });
    });

    it("returns the packed record of a suspended licence", async function () {
      const { token, applicant, expiresAt } = await loadFixture(deploySuspendedLicence);
      expect(asRecord(await token.licence(TOKEN_ID))).to.deep.equal({
        owner: applicant.address,
        status: Status.Suspended,
        reasonCode: SUSPENSION_REASON,
        workflowId: WORKFLOW_ID,
        expiresAt,
      });
    });

    it("keeps the whole record in one storage slot", async function () {
      const { token, applicant, expiresAt } = await loadFixture(deploySuspendedLicence);
      // owner (160 bits) | status (8) | reasonCode (8) | workflowId (32) | expiresAt (40) = 248 bits.
      const packed =
        BigInt(applicant.address) |
        (Status.Suspended << 160n) |
        (SUSPENSION_REASON << 168n) |
        (WORKFLOW_ID << 176n) |
        (expiresAt << 208n);
      // _licences is declared after AccessControl's _roles (slot 0), _name, _symbol and _baseURI: slot 4.
      const slot = ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["uint256", "uint256"], [TOKEN_ID, 4n]));
      expect(BigInt(await networkHelpers.getStorageAt(await token.getAddress(), slot))).to.equal(packed);
    });

    it("reverts with ERC721NonexistentToken for an unknown token", async function () {
      const { token } = await loadFixture(deployDraftLicence);
      await expect(token.licence(UNKNOWN_TOKEN_ID))
        .to.be.revertedWithCustomError(token, "ERC721NonexistentToken")
        .withArgs(UNKNOWN_TOKEN_ID);
    });
  });

  describe("anchorStatusList", function () {
    const LAST_LIST = Number(MAX_TOKEN_ID / 131_072n);
    const digests = (label: string) =>
      [sha(`${label}-revocation`), sha(`${label}-suspension`), sha(`${label}-token`)] as const;

    describe("when the caller has OPERATOR_ROLE", function () {
      it("emits StatusListAnchored and statusListAnchorOf returns the digests, sequence and block", async function () {
        const { token, operator } = await loadFixture(deployIssuedLicence);
        const [revocation, suspension, tokenStatus] = digests("first");
        const tx = await token.connect(operator).anchorStatusList(0, 1, revocation, suspension, tokenStatus);
        await expect(tx).to.emit(token, "StatusListAnchored").withArgs(0, 1, revocation, suspension, tokenStatus);
        const receipt = await tx.wait();
        const anchor = await token.statusListAnchorOf(0);
        expect([anchor.revocation, anchor.suspension, anchor.tokenStatus]).to.deep.equal([
          revocation,
          suspension,
          tokenStatus,
        ]);
        expect([anchor.sequence, anchor.blockNumber]).to.deep.equal([1n, BigInt(receipt!.blockNumber)]);
      });

      it("replaces the list's anchor with the next sequence and leaves other lists alone", async function () {
        const { token, operator } = await loadFixture(deployIssuedLicence);
        await token.connect(operator).anchorStatusList(0, 1, ...digests("first"));
        await token.connect(operator).anchorStatusList(7, 1, ...digests("other"));
        const second = digests("second");
        await expect(token.connect(operator).anchorStatusList(0, 2, ...second))
          .to.emit(token, "StatusListAnchored")
          .withArgs(0, 2, ...second);
        const [list0, list7] = [await token.statusListAnchorOf(0), await token.statusListAnchorOf(7)];
        expect([list0.revocation, list0.suspension, list0.tokenStatus, list0.sequence]).to.deep.equal([...second, 2n]);
        expect([list7.revocation, list7.sequence]).to.deep.equal([digests("other")[0], 1n]);
      });

      it("accepts the last list a token id can fall in, (2^40 - 1) div 131,072", async function () {
        const { token, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).anchorStatusList(LAST_LIST, 1, ...digests("last"))).to.emit(
          token,
          "StatusListAnchored",
        );
      });

      it("reverts with StatusListOutOfRange for a list no token id can fall in", async function () {
        const { token, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).anchorStatusList(LAST_LIST + 1, 1, ...digests("beyond")))
          .to.be.revertedWithCustomError(token, "StatusListOutOfRange")
          .withArgs(LAST_LIST + 1, LAST_LIST);
      });

      it("reverts with StatusListAnchorOutOfOrder for a sequence that is not the list's next (stale, repeated or skipped)", async function () {
        const { token, operator } = await loadFixture(deployTokenWithRegistrySigner);
        await expect(token.connect(operator).anchorStatusList(0, 0, ...digests("zero")))
          .to.be.revertedWithCustomError(token, "StatusListAnchorOutOfOrder")
          .withArgs(0, 1, 0);
        await token.connect(operator).anchorStatusList(0, 1, ...digests("first"));
        for (const sequence of [1, 3]) {
          await expect(token.connect(operator).anchorStatusList(0, sequence, ...digests("again")))
            .to.be.revertedWithCustomError(token, "StatusListAnchorOutOfOrder")
            .withArgs(0, 2, sequence);
        }
        expect((await token.statusListAnchorOf(0)).revocation).to.equal(digests("first")[0]);
      });
    });

    it("reverts with AccessControlUnauthorizedAccount for ADMIN_ROLE, DEFAULT_ADMIN_ROLE and anyone else", async function () {
      const { token, admin, deployer, applicant } = await loadFixture(deployTokenWithRegistrySigner);
      for (const caller of [admin, deployer, applicant]) {
        await expect(token.connect(caller).anchorStatusList(0, 1, ...digests("x")))
          .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.OPERATOR);
      }
    });

    it("statusListAnchorOf returns zeros for a list never anchored", async function () {
      const { token } = await loadFixture(deployTokenWithRegistrySigner);
      const anchor = await token.statusListAnchorOf(3);
      expect([anchor.revocation, anchor.suspension, anchor.tokenStatus]).to.deep.equal(Array(3).fill(ethers.ZeroHash));
      expect([anchor.sequence, anchor.blockNumber]).to.deep.equal([0n, 0n]);
    });
  });

  describe("activeWorkflowOf", function () {
    it("returns the workflow registered for the request type", async function () {
      const { token } = await loadFixture(deployTokenWithRegistrySigner);
      expect(await token.activeWorkflowOf(BUILDING_PERMIT)).to.equal(WORKFLOW_ID);
    });

    it("returns 0 for a request type without a workflow", async function () {
      const { token } = await loadFixture(deployTokenWithRegistrySigner);
      expect(await token.activeWorkflowOf(TRADE_LICENSE)).to.equal(0n);
      expect(await token.activeWorkflowOf(code("UNKNOWN"))).to.equal(0n);
    });

    it("follows the approval registry's latest workflow version", async function () {
      const { platformToken: token, registry, admin } = await loadFixture(deployTokenWithRegistrySigner);
      await registry
        .connect(admin)
        .registerWorkflow(BUILDING_PERMIT, ethers.id("v2"), VALIDITY_SECONDS, REFERENCE_STAGES);
      expect(await token.activeWorkflowOf(BUILDING_PERMIT)).to.equal(2n);
    });
  });
});
