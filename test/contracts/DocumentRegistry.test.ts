import { expect } from "chai";
import type { ContractTransactionResponse } from "ethers";

import {
  BUILDING_PERMIT,
  code,
  COMMITMENT,
  Decision,
  deployPlatform,
  deploySubmittedRequest,
  deployWithReferenceWorkflow,
  DocPhase,
  ethers,
  latestVersions,
  networkHelpers,
  ROLES,
  sha,
  Status,
  uuid,
} from "./helpers/fixtures.ts";

const { loadFixture } = networkHelpers;

const TOKEN_ID = 1n;
const OTHER_TOKEN_ID = 2n;
const UNKNOWN_TOKEN_ID = 404n;
const MAX_DOCUMENTS = 16n;
const MAX_VERSION = 0x7fffn;
const REMARKS = "0x" + "11".repeat(32);
const CANCEL_REASON = 3n;

// Department ids as deployPlatform registers them (A..F -> 1..6).
const DEPARTMENT = { A: 1n, B: 2n, C: 3n, D: 4n } as const;

// Storage slots of DocumentRegistry: AccessControl's _roles (0), reviewRegistry (1), _anchors (2), _documents (3).
const ANCHORS_SLOT = 2n;
const DOCUMENTS_SLOT = 3n;
const mappingSlot = (key: bigint | string, slot: bigint) =>
  ethers.keccak256(
    ethers.AbiCoder.defaultAbiCoder().encode([typeof key === "bigint" ? "uint256" : "bytes32", "uint256"], [key, slot]),
  );

// The three documents deploySubmittedRequest anchors on token 1.
const DOC_IDS = [uuid(1), uuid(2), uuid(3)];
const DOC_TYPES = [code("DOC_0"), code("DOC_1"), code("DOC_2")];
const docHash = (index: number, version: number) => sha(`doc-${index}-v${version}`);

/** The named fields of an `anchorOf()` record, for deep comparison. */
function asAnchor(anchor: {
  documentId: string;
  tokenId: bigint;
  docIndex: bigint;
  version: bigint;
  blockNumber: bigint;
  timestamp: bigint;
}) {
  const { documentId, tokenId, docIndex, version, blockNumber, timestamp } = anchor;
  return { documentId, tokenId, docIndex, version, blockNumber, timestamp };
}

/** Block number and timestamp of the block that mined `tx`. */
async function blockOf(tx: ContractTransactionResponse) {
  const receipt = await tx.wait();
  const block = await ethers.provider.getBlock(receipt!.blockNumber);
  return { blockNumber: BigInt(block!.number), timestamp: BigInt(block!.timestamp) };
}

/** The packed word of `documentsOf`: phase | count << 8 | version of index i << (16 + 15 i). */
function pack(phase: bigint, versions: bigint[]): bigint {
  return versions.reduce(
    (word, version, i) => word | (version << (16n + 15n * BigInt(i))),
    phase | (BigInt(versions.length) << 8n),
  );
}

// ------------------------------------------------------------------------------------------------ fixtures

/** Reference platform plus token 1 minted as a Draft, with no document anchored yet. */
async function deployDraftRequest() {
  const platform = await deployWithReferenceWorkflow();
  await platform.token
    .connect(platform.operator)
    .mint(platform.applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
  return platform;
}

/** Draft token 1 with three documents anchored (indexes 0..2, version 1), as in deploySubmittedRequest. */
async function deployOpenRequest() {
  const platform = await deployDraftRequest();
  for (let i = 0; i < 3; i++) {
    await platform.documents
      .connect(platform.operator)
      .anchorDocument(TOKEN_ID, DOC_IDS[i], DOC_TYPES[i], docHash(i, 1));
  }
  return platform;
}

/** Draft token 1 with the maximum of 16 documents anchored. */
async function deployFullRequest() {
  const platform = await deployDraftRequest();
  for (let i = 0; i < Number(MAX_DOCUMENTS); i++) {
    await platform.documents
      .connect(platform.operator)
      .anchorDocument(TOKEN_ID, uuid(i + 1), code(`DOC_${i}`), docHash(i, 1));
  }
  return platform;
}

/**
 * A token and a document registry wired, once, to an externally owned `registrySigner` standing in for the
 * approval registry (so `setPhase` and the token's review transitions can be called directly), with Draft token 1
 * minted; `anchor`: its three documents anchored as in deployOpenRequest. The platform's own contracts are kept as
 * `platformDocuments` and `registry`.
 */
async function wiredToSigner(anchor: boolean) {
  const platform = await deployWithReferenceWorkflow();
  const { deployer, operator, applicant } = platform;
  const registrySigner = platform.signers[12];
  const token = await ethers.deployContract("LicenceToken", ["Licence", "LIC", "", deployer.address]);
  const documents = await ethers.deployContract("DocumentRegistry", [await token.getAddress(), deployer.address]);
  await token.setApprovalRegistry(registrySigner.address);
  await documents.setReviewRegistry(registrySigner.address);
  await token.grantRole(ROLES.OPERATOR, operator.address);
  await documents.grantRole(ROLES.OPERATOR, operator.address);
  await token.connect(registrySigner).setActiveWorkflow(BUILDING_PERMIT, 1n);
  await token.connect(operator).mint(applicant.address, TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
  for (let i = 0; anchor && i < 3; i++) {
    await documents.connect(operator).anchorDocument(TOKEN_ID, DOC_IDS[i], DOC_TYPES[i], docHash(i, 1));
  }
  return { ...platform, platformDocuments: platform.documents, token, documents, registrySigner };
}

/** Draft token 1 with three documents, on contracts wired to `registrySigner` (see wiredToSigner). */
async function deployWithRegistrySigner() {
  return wiredToSigner(true);
}

/** Draft token 1 with no document, on contracts wired to `registrySigner` (see wiredToSigner). */
async function deployEmptyWithRegistrySigner() {
  return wiredToSigner(false);
}

/** A document registry deployed on its own, with no review registry set. */
async function deployUnwiredDocumentRegistry() {
  const platform = await deployPlatform();
  const unwired = await ethers.deployContract("DocumentRegistry", [
    await platform.token.getAddress(),
    platform.deployer.address,
  ]);
  return { ...platform, unwired };
}

/** Submitted request after every department approved: the licence is issued and documents locked. */
async function deployApprovedRequest() {
  const platform = await deploySubmittedRequest();
  const { registry, departments } = platform;
  await registry.connect(departments.A).approve(TOKEN_ID, 0b111, await latestVersions(registry, TOKEN_ID), REMARKS);
  await registry.connect(departments.B).approve(TOKEN_ID, 0b111, await latestVersions(registry, TOKEN_ID), REMARKS);
  await registry.connect(departments.C).approve(TOKEN_ID, 0b111, await latestVersions(registry, TOKEN_ID), REMARKS);
  await registry.connect(departments.D).approve(TOKEN_ID, 0b111, await latestVersions(registry, TOKEN_ID), REMARKS);
  return platform;
}

/** Submitted request rejected by department A (reason 1, FailRequest): documents locked. */
async function deployRejectedRequest() {
  const platform = await deploySubmittedRequest();
  await platform.registry
    .connect(platform.departments.A)
    .reject(TOKEN_ID, 1, 0b111, await latestVersions(platform.registry, TOKEN_ID), REMARKS);
  return platform;
}

/** Draft request with documents, cancelled before submission: documents locked. */
async function deployCancelledRequest() {
  const platform = await deployOpenRequest();
  await platform.registry.connect(platform.operator).cancel(TOKEN_ID, CANCEL_REASON);
  return platform;
}

/** Draft request cancelled before any document was anchored. */
async function deployCancelledEmptyRequest() {
  const platform = await deployDraftRequest();
  await platform.registry.connect(platform.operator).cancel(TOKEN_ID, CANCEL_REASON);
  return platform;
}

const LOCKED_REQUESTS = [
  { name: "after final approval", fixture: deployApprovedRequest },
  { name: "after a rejection", fixture: deployRejectedRequest },
  { name: "after a cancellation", fixture: deployCancelledRequest },
];

// ------------------------------------------------------------------------------------------------ tests

describe("DocumentRegistry", function () {
  describe("deployment", function () {
    it("stores the licence token and the limits", async function () {
      const { documents, token } = await loadFixture(deployPlatform);
      expect(await documents.licenceToken()).to.equal(await token.getAddress());
      expect(await documents.MAX_DOCUMENTS()).to.equal(MAX_DOCUMENTS);
      expect(await documents.MAX_VERSION()).to.equal(MAX_VERSION);
    });

    it("grants DEFAULT_ADMIN_ROLE to the admin passed to the constructor", async function () {
      const { documents, deployer, admin } = await loadFixture(deployPlatform);
      expect(await documents.hasRole(ROLES.DEFAULT_ADMIN, deployer.address)).to.equal(true);
      expect(await documents.hasRole(ROLES.DEFAULT_ADMIN, admin.address)).to.equal(false);
    });

    it("is wired to the approval registry and grants OPERATOR_ROLE to the operator", async function () {
      const { documents, registry, operator } = await loadFixture(deployPlatform);
      expect(await documents.reviewRegistry()).to.equal(await registry.getAddress());
      expect(await documents.hasRole(ROLES.OPERATOR, operator.address)).to.equal(true);
    });

    it("has every role administered by DEFAULT_ADMIN_ROLE", async function () {
      const { documents } = await loadFixture(deployPlatform);
      for (const role of Object.values(ROLES)) {
        expect(await documents.getRoleAdmin(role)).to.equal(ROLES.DEFAULT_ADMIN);
      }
    });

    it("reverts grantRole with AccessControlUnauthorizedAccount for a caller without DEFAULT_ADMIN_ROLE", async function () {
      const { documents, admin, stranger } = await loadFixture(deployPlatform);
      await expect(documents.connect(admin).grantRole(ROLES.OPERATOR, stranger.address))
        .to.be.revertedWithCustomError(documents, "AccessControlUnauthorizedAccount")
        .withArgs(admin.address, ROLES.DEFAULT_ADMIN);
    });

    it("supports ERC-165 and AccessControl interfaces only", async function () {
      const { documents } = await loadFixture(deployPlatform);
      expect(await documents.supportsInterface("0x01ffc9a7")).to.equal(true);
      expect(await documents.supportsInterface("0x7965db0b")).to.equal(true);
      expect(await documents.supportsInterface("0xffffffff")).to.equal(false);
    });
  });

  describe("anchorDocument", function () {
    it("reverts with AccessControlUnauthorizedAccount when the caller lacks OPERATOR_ROLE", async function () {
      const { documents, deployer, admin, applicant, stranger } = await loadFixture(deployDraftRequest);
      for (const caller of [deployer, admin, applicant, stranger]) {
        await expect(documents.connect(caller).anchorDocument(TOKEN_ID, uuid(1), code("ID"), sha("x")))
          .to.be.revertedWithCustomError(documents, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.OPERATOR);
      }
    });

    describe("when it is the token's first document", function () {
      it("reverts with DocumentsNotEditable for a token that does not exist", async function () {
        const { documents, operator } = await loadFixture(deployDraftRequest);
        await expect(documents.connect(operator).anchorDocument(UNKNOWN_TOKEN_ID, uuid(1), code("ID"), sha("x")))
          .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
          .withArgs(UNKNOWN_TOKEN_ID);
      });

      it("reverts with DocumentsNotEditable for a token that is no longer a Draft", async function () {
        const { documents, token, operator, registrySigner } = await loadFixture(deployEmptyWithRegistrySigner);
        // Submit token 1 on the token alone, leaving its document phase Unopened.
        await token.connect(registrySigner).transition(TOKEN_ID, Status.Submitted, 0);
        expect((await documents.documentsOf(TOKEN_ID)).phase).to.equal(DocPhase.Unopened);
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(1), code("ID"), sha("x")))
          .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
          .withArgs(TOKEN_ID);
      });

      it("reverts with DocumentsNotEditable for a token cancelled before any document", async function () {
        const { documents, operator } = await loadFixture(deployCancelledEmptyRequest);
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(1), code("ID"), sha("x")))
          .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
          .withArgs(TOKEN_ID);
      });

      it("opens the token's documents and anchors index 0, version 1", async function () {
        const { documents, operator } = await loadFixture(deployDraftRequest);
        expect(await documents.packedDocumentsOf(TOKEN_ID)).to.equal(0n);
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, DOC_IDS[0], DOC_TYPES[0], docHash(0, 1)))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(TOKEN_ID, DOC_IDS[0], docHash(0, 1), 0n, 1n, DOC_TYPES[0]);
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 1n, [1n]]);
      });
    });

    describe("when documents are open", function () {
      it("returns consecutive indexes 0, 1, 2, ...", async function () {
        const { documents, operator } = await loadFixture(deployDraftRequest);
        for (let i = 0; i < 4; i++) {
          const hash = sha(`index-${i}`);
          expect(
            await documents.connect(operator).anchorDocument.staticCall(TOKEN_ID, uuid(i + 1), code("ID"), hash),
          ).to.equal(BigInt(i));
          await documents.connect(operator).anchorDocument(TOKEN_ID, uuid(i + 1), code("ID"), hash);
        }
      });

      it("emits DocumentAnchored with every argument", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        const documentId = uuid(42);
        const docType = code("SITE_PLAN");
        const hash = sha("site-plan");
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, documentId, docType, hash))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(TOKEN_ID, documentId, hash, 3n, 1n, docType);
      });

      it("counts the document and records version 1 at its index", async function () {
        const { documents } = await loadFixture(deployOpenRequest);
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 3n, [1n, 1n, 1n]]);
        expect(await documents.packedDocumentsOf(TOKEN_ID)).to.equal(pack(DocPhase.Open, [1n, 1n, 1n]));
      });

      it("accepts the 16th document at index 15", async function () {
        const { documents, operator } = await loadFixture(deployDraftRequest);
        for (let i = 0; i < 15; i++) {
          await documents.connect(operator).anchorDocument(TOKEN_ID, uuid(i + 1), code("ID"), docHash(i, 1));
        }
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(16), code("LAST"), docHash(15, 1)))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(TOKEN_ID, uuid(16), docHash(15, 1), 15n, 1n, code("LAST"));
        expect((await documents.documentsOf(TOKEN_ID)).count).to.equal(16n);
      });

      it("reverts with DocumentLimitReached for a 17th document", async function () {
        const { documents, operator } = await loadFixture(deployFullRequest);
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(17), code("ID"), sha("17th")))
          .to.be.revertedWithCustomError(documents, "DocumentLimitReached")
          .withArgs(TOKEN_ID, MAX_DOCUMENTS);
      });

      it("reverts with DocumentInvalidHash for the zero hash", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(9), code("ID"), ethers.ZeroHash))
          .to.be.revertedWithCustomError(documents, "DocumentInvalidHash")
          .withArgs();
      });

      it("reverts with DocumentAlreadyAnchored for a hash already anchored to the token", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(9), code("ID"), docHash(1, 1)))
          .to.be.revertedWithCustomError(documents, "DocumentAlreadyAnchored")
          .withArgs(docHash(1, 1), TOKEN_ID);
      });

      it("anchors bytes another request holds: a file is reused across requests, and each keeps its own record", async function () {
        const { documents, token, operator, applicant } = await loadFixture(deployOpenRequest);
        await token.connect(operator).mint(applicant.address, OTHER_TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        await expect(documents.connect(operator).anchorDocument(OTHER_TOKEN_ID, uuid(9), code("ID"), docHash(0, 1)))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(OTHER_TOKEN_ID, uuid(9), docHash(0, 1), 0n, 1n, code("ID"));
        const [other] = await documents.anchorOf(OTHER_TOKEN_ID, docHash(0, 1));
        const [own] = await documents.anchorOf(TOKEN_ID, docHash(0, 1));
        expect([other.tokenId, other.documentId, other.docIndex]).to.deep.equal([OTHER_TOKEN_ID, uuid(9), 0n]);
        expect([own.tokenId, own.documentId, own.docIndex]).to.deep.equal([TOKEN_ID, DOC_IDS[0], 0n]);
        // A new version in one request leaves the other's record the latest of its document.
        await documents.connect(operator).anchorVersion(OTHER_TOKEN_ID, docHash(0, 1), sha("other v2"));
        expect((await documents.anchorOf(OTHER_TOKEN_ID, docHash(0, 1))).isLatest).to.equal(false);
        expect((await documents.anchorOf(TOKEN_ID, docHash(0, 1))).isLatest).to.equal(true);
        await expect(documents.connect(operator).anchorDocument(OTHER_TOKEN_ID, uuid(10), code("ID"), docHash(0, 1)))
          .to.be.revertedWithCustomError(documents, "DocumentAlreadyAnchored")
          .withArgs(docHash(0, 1), OTHER_TOKEN_ID);
      });

      it("keeps the documents of different tokens apart", async function () {
        const { documents, token, operator, applicant } = await loadFixture(deployOpenRequest);
        await token.connect(operator).mint(applicant.address, OTHER_TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
        await expect(documents.connect(operator).anchorDocument(OTHER_TOKEN_ID, uuid(9), code("ID"), sha("other")))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(OTHER_TOKEN_ID, uuid(9), sha("other"), 0n, 1n, code("ID"));
        expect(await documents.documentsOf(OTHER_TOKEN_ID)).to.deep.equal([DocPhase.Open, 1n, [1n]]);
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 3n, [1n, 1n, 1n]]);
      });
    });

    describe("when documents are locked", function () {
      for (const { name, fixture } of LOCKED_REQUESTS) {
        it(`reverts with DocumentsNotEditable ${name}`, async function () {
          const { documents, operator } = await loadFixture(fixture);
          await expect(documents.connect(operator).anchorDocument(TOKEN_ID, uuid(9), code("ID"), sha("late")))
            .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
            .withArgs(TOKEN_ID);
        });
      }
    });
  });

  describe("anchorVersion", function () {
    it("reverts with AccessControlUnauthorizedAccount when the caller lacks OPERATOR_ROLE", async function () {
      const { documents, deployer, admin, applicant, stranger } = await loadFixture(deployOpenRequest);
      for (const caller of [deployer, admin, applicant, stranger]) {
        await expect(documents.connect(caller).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2)))
          .to.be.revertedWithCustomError(documents, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.OPERATOR);
      }
    });

    it("reverts with DocumentUnknownHash when the previous hash is unknown: never anchored, another request's latest, zero", async function () {
      const { documents, token, operator, applicant } = await loadFixture(deployOpenRequest);
      await token.connect(operator).mint(applicant.address, OTHER_TOKEN_ID, BUILDING_PERMIT, COMMITMENT);
      for (const [tokenId, previous] of [
        [TOKEN_ID, sha("never anchored")],
        [OTHER_TOKEN_ID, docHash(0, 1)],
        [TOKEN_ID, ethers.ZeroHash],
      ] as const) {
        await expect(documents.connect(operator).anchorVersion(tokenId, previous, sha("new")))
          .to.be.revertedWithCustomError(documents, "DocumentUnknownHash")
          .withArgs(tokenId, previous);
      }
    });

    describe("when documents are open", function () {
      it("anchors versions 1..n of a document, each replacing the previous one", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        for (let version = 2; version <= 5; version++) {
          const previous = docHash(1, version - 1);
          const next = docHash(1, version);
          expect(await documents.connect(operator).anchorVersion.staticCall(TOKEN_ID, previous, next)).to.equal(
            BigInt(version),
          );
          await expect(documents.connect(operator).anchorVersion(TOKEN_ID, previous, next))
            .to.emit(documents, "DocumentAnchored")
            .withArgs(TOKEN_ID, DOC_IDS[1], next, 1n, BigInt(version), ethers.ZeroHash);
        }
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 3n, [1n, 5n, 1n]]);
      });

      it("leaves the document count unchanged", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(2, 1), docHash(2, 2));
        expect((await documents.documentsOf(TOKEN_ID)).count).to.equal(3n);
      });

      it("does not call the approval registry", async function () {
        const { documents, registry, operator } = await loadFixture(deployOpenRequest);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2))).not.to.emit(
          registry,
          "ReviewInvalidated",
        );
      });

      it("reverts with DocumentNotLatestVersion when the previous hash is not the latest version", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2));
        await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 2), docHash(0, 3));
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), sha("fork")))
          .to.be.revertedWithCustomError(documents, "DocumentNotLatestVersion")
          .withArgs(docHash(0, 1), 1n, 3n);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 2), sha("fork")))
          .to.be.revertedWithCustomError(documents, "DocumentNotLatestVersion")
          .withArgs(docHash(0, 2), 2n, 3n);
      });

      it("reverts with DocumentInvalidHash for the zero hash", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), ethers.ZeroHash))
          .to.be.revertedWithCustomError(documents, "DocumentInvalidHash")
          .withArgs();
      });

      it("reverts with DocumentAlreadyAnchored for a hash already anchored", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(2, 1)))
          .to.be.revertedWithCustomError(documents, "DocumentAlreadyAnchored")
          .withArgs(docHash(2, 1), TOKEN_ID);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 1)))
          .to.be.revertedWithCustomError(documents, "DocumentAlreadyAnchored")
          .withArgs(docHash(0, 1), TOKEN_ID);
      });

      it("accepts version 32767 and reverts with DocumentVersionLimitReached after it", async function () {
        const { documents, operator } = await loadFixture(deployOpenRequest);
        const address = await documents.getAddress();
        const docIndex = 2n;
        const previous = docHash(2, 1);

        // Fast-forward document 2 to version 32766 in storage instead of anchoring 32,765 versions.
        const documentsSlot = mappingSlot(TOKEN_ID, DOCUMENTS_SLOT);
        const packed = BigInt(await networkHelpers.getStorageAt(address, documentsSlot));
        expect(packed).to.equal(await documents.packedDocumentsOf(TOKEN_ID));
        const shift = 16n + 15n * docIndex;
        await networkHelpers.setStorageAt(
          address,
          documentsSlot,
          (packed & ~(MAX_VERSION << shift)) | ((MAX_VERSION - 1n) << shift),
        );
        // Anchor layout: documentId (128 bits) | tokenId (40) | docIndex (8) | version (16) | block (32) | time (32).
        const anchorSlot = mappingSlot(previous, BigInt(mappingSlot(TOKEN_ID, ANCHORS_SLOT)));
        const record = BigInt(await networkHelpers.getStorageAt(address, anchorSlot));
        expect((record >> 176n) & 0xffffn).to.equal(1n);
        expect((record >> 168n) & 0xffn).to.equal(docIndex);
        await networkHelpers.setStorageAt(
          address,
          anchorSlot,
          (record & ~(0xffffn << 176n)) | ((MAX_VERSION - 1n) << 176n),
        );
        const [anchor, isLatest] = await documents.anchorOf(TOKEN_ID, previous);
        expect(anchor.version).to.equal(MAX_VERSION - 1n);
        expect(isLatest).to.equal(true);

        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, previous, sha("last version")))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(TOKEN_ID, DOC_IDS[2], sha("last version"), docIndex, MAX_VERSION, ethers.ZeroHash);
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 3n, [1n, 1n, MAX_VERSION]]);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, sha("last version"), sha("one too many")))
          .to.be.revertedWithCustomError(documents, "DocumentVersionLimitReached")
          .withArgs(TOKEN_ID, docIndex);
      });
    });

    describe("when documents are under review", function () {
      it("anchors the next version and emits DocumentAnchored with docType 0", async function () {
        const { documents, operator } = await loadFixture(deploySubmittedRequest);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2)))
          .to.emit(documents, "DocumentAnchored")
          .withArgs(TOKEN_ID, DOC_IDS[0], docHash(0, 2), 0n, 2n, ethers.ZeroHash);
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Review, 3n, [2n, 1n, 1n]]);
      });

      it("invalidates the approvals that reviewed the document", async function () {
        const { documents, registry, operator, departments } = await loadFixture(deploySubmittedRequest);
        await registry
          .connect(departments.A)
          .approve(TOKEN_ID, 0b011, await latestVersions(registry, TOKEN_ID), REMARKS);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(1, 1), docHash(1, 2)))
          .to.emit(registry, "ReviewInvalidated")
          .withArgs(TOKEN_ID, DEPARTMENT.A, 0n, 1n, 2n);
        expect(await registry.decisionsOf(TOKEN_ID, 0)).to.deep.equal([
          [DEPARTMENT.A, DEPARTMENT.B],
          [Decision.ReviewRequired, Decision.Pending],
          [0b011n, 0n],
        ]);
      });

      it("leaves approvals that did not review the document untouched", async function () {
        const { documents, registry, operator, departments } = await loadFixture(deploySubmittedRequest);
        await registry
          .connect(departments.A)
          .approve(TOKEN_ID, 0b011, await latestVersions(registry, TOKEN_ID), REMARKS);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(2, 1), docHash(2, 2))).not.to.emit(
          registry,
          "ReviewInvalidated",
        );
        expect(await registry.decisionsOf(TOKEN_ID, 0)).to.deep.equal([
          [DEPARTMENT.A, DEPARTMENT.B],
          [Decision.Approved, Decision.Pending],
          [0b011n, 0n],
        ]);
      });

      it("invalidates the approvals of every department that reviewed the document", async function () {
        const { documents, registry, operator, departments } = await loadFixture(deploySubmittedRequest);
        await registry
          .connect(departments.A)
          .approve(TOKEN_ID, 0b111, await latestVersions(registry, TOKEN_ID), REMARKS);
        await registry
          .connect(departments.B)
          .approve(TOKEN_ID, 0b001, await latestVersions(registry, TOKEN_ID), REMARKS);
        await registry
          .connect(departments.C)
          .approve(TOKEN_ID, 0b001, await latestVersions(registry, TOKEN_ID), REMARKS);
        const tx = await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2));
        await expect(tx).to.emit(registry, "ReviewInvalidated").withArgs(TOKEN_ID, DEPARTMENT.A, 0n, 0n, 2n);
        await expect(tx).to.emit(registry, "ReviewInvalidated").withArgs(TOKEN_ID, DEPARTMENT.B, 0n, 0n, 2n);
        await expect(tx).to.emit(registry, "ReviewInvalidated").withArgs(TOKEN_ID, DEPARTMENT.C, 1n, 0n, 2n);
        expect((await registry.decisionsOf(TOKEN_ID, 0)).statuses).to.deep.equal([
          Decision.ReviewRequired,
          Decision.ReviewRequired,
        ]);
      });

      it("still accepts new versions while the applicant is asked for changes", async function () {
        const { documents, registry, operator, departments } = await loadFixture(deploySubmittedRequest);
        await registry
          .connect(departments.A)
          .approve(TOKEN_ID, 0b111, await latestVersions(registry, TOKEN_ID), REMARKS);
        await registry
          .connect(departments.B)
          .requestChanges(TOKEN_ID, 0b100, await latestVersions(registry, TOKEN_ID), REMARKS);
        expect((await documents.documentsOf(TOKEN_ID)).phase).to.equal(DocPhase.Review);
        const tx = await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(2, 1), docHash(2, 2));
        await expect(tx)
          .to.emit(documents, "DocumentAnchored")
          .withArgs(TOKEN_ID, DOC_IDS[2], docHash(2, 2), 2n, 2n, ethers.ZeroHash);
        await expect(tx).to.emit(registry, "ReviewInvalidated").withArgs(TOKEN_ID, DEPARTMENT.A, 0n, 2n, 2n);
      });
    });

    describe("when documents are locked", function () {
      for (const { name, fixture } of LOCKED_REQUESTS) {
        it(`reverts with DocumentsNotEditable ${name}`, async function () {
          const { documents, operator } = await loadFixture(fixture);
          await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), sha("late version")))
            .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
            .withArgs(TOKEN_ID);
        });
      }
    });
  });

  describe("setPhase", function () {
    describe("when the caller is not the approval registry", function () {
      it("reverts with DocumentUnauthorizedRegistry (DEFAULT_ADMIN_ROLE, admin, operator, a department, anyone)", async function () {
        const { documents, deployer, admin, operator, stranger, departments } = await loadFixture(deployOpenRequest);
        for (const caller of [deployer, admin, operator, departments.A, stranger]) {
          for (const phase of [DocPhase.Open, DocPhase.Review, DocPhase.Locked]) {
            await expect(documents.connect(caller).setPhase(TOKEN_ID, phase))
              .to.be.revertedWithCustomError(documents, "DocumentUnauthorizedRegistry")
              .withArgs(caller.address);
          }
        }
      });

      it("reverts with DocumentUnauthorizedRegistry even after DEFAULT_ADMIN_ROLE grants the caller every role", async function () {
        const { documents, deployer, stranger } = await loadFixture(deployOpenRequest);
        for (const role of Object.values(ROLES)) await documents.connect(deployer).grantRole(role, stranger.address);
        await expect(documents.connect(stranger).setPhase(TOKEN_ID, DocPhase.Open))
          .to.be.revertedWithCustomError(documents, "DocumentUnauthorizedRegistry")
          .withArgs(stranger.address);
      });
    });

    describe("when the caller is the approval registry", function () {
      for (const [name, phase] of [
        ["Review", DocPhase.Review],
        ["Locked", DocPhase.Locked],
      ] as const) {
        it(`emits DocumentPhaseChanged and sets ${name}, keeping count and versions`, async function () {
          const { documents, operator, registrySigner } = await loadFixture(deployWithRegistrySigner);
          await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(1, 1), docHash(1, 2));
          await expect(documents.connect(registrySigner).setPhase(TOKEN_ID, phase))
            .to.emit(documents, "DocumentPhaseChanged")
            .withArgs(TOKEN_ID, phase);
          expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([phase, 3n, [1n, 2n, 1n]]);
          expect(await documents.packedDocumentsOf(TOKEN_ID)).to.equal(pack(phase, [1n, 2n, 1n]));
        });
      }

      it("locking stops anchoring; Locked reopens only to Review", async function () {
        const { documents, operator, registrySigner } = await loadFixture(deployWithRegistrySigner);
        await documents.connect(registrySigner).setPhase(TOKEN_ID, DocPhase.Locked);
        await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2)))
          .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
          .withArgs(TOKEN_ID);
        await expect(documents.connect(registrySigner).setPhase(TOKEN_ID, DocPhase.Open))
          .to.be.revertedWithCustomError(documents, "DocumentInvalidPhaseChange")
          .withArgs(TOKEN_ID, DocPhase.Locked, DocPhase.Open);
        await expect(documents.connect(registrySigner).setPhase(TOKEN_ID, DocPhase.Review))
          .to.emit(documents, "DocumentPhaseChanged")
          .withArgs(TOKEN_ID, DocPhase.Review);
      });

      it("reverts with DocumentInvalidPhaseChange from every phase (documents never change again without invalidation) when the phase is Open or Unopened", async function () {
        const { documents, registrySigner } = await loadFixture(deployWithRegistrySigner);
        for (const from of [DocPhase.Open, DocPhase.Review, DocPhase.Locked]) {
          if (from !== DocPhase.Open) await documents.connect(registrySigner).setPhase(TOKEN_ID, from);
          for (const to of [DocPhase.Open, DocPhase.Unopened]) {
            await expect(documents.connect(registrySigner).setPhase(TOKEN_ID, to))
              .to.be.revertedWithCustomError(documents, "DocumentInvalidPhaseChange")
              .withArgs(TOKEN_ID, from, to);
          }
          expect((await documents.documentsOf(TOKEN_ID)).phase).to.equal(from);
        }
      });
    });

    describe("when driven by the approval registry", function () {
      it("moves to Review on submit", async function () {
        const { documents, registry, operator } = await loadFixture(deployOpenRequest);
        await expect(registry.connect(operator).submit(TOKEN_ID))
          .to.emit(documents, "DocumentPhaseChanged")
          .withArgs(TOKEN_ID, DocPhase.Review);
        expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Review, 3n, [1n, 1n, 1n]]);
      });

      it("moves to Locked on the final approval, a rejection, the cancellation of a Draft or of a request awaiting resubmission", async function () {
        type Platform = Awaited<ReturnType<typeof deploySubmittedRequest>>;
        const latest = ({ registry }: Platform) => latestVersions(registry, TOKEN_ID);
        const cases: [string, () => Promise<Platform>, (p: Platform) => Promise<unknown>][] = [
          [
            "the final approval",
            deploySubmittedRequest,
            async (p) => {
              for (const name of ["A", "B", "C"])
                await p.registry.connect(p.departments[name]).approve(TOKEN_ID, 0b111, await latest(p), REMARKS);
              return p.registry.connect(p.departments.D).approve(TOKEN_ID, 0b111, await latest(p), REMARKS);
            },
          ],
          [
            "a rejection",
            deploySubmittedRequest,
            async (p) => p.registry.connect(p.departments.A).reject(TOKEN_ID, 1, 0b111, await latest(p), REMARKS),
          ],
          [
            "the cancellation of a Draft",
            deployOpenRequest,
            async (p) => p.registry.connect(p.operator).cancel(TOKEN_ID, CANCEL_REASON),
          ],
          [
            "the cancellation of a request awaiting resubmission",
            deploySubmittedRequest,
            async (p) => {
              await p.registry.connect(p.departments.A).requestChanges(TOKEN_ID, 0b001, await latest(p), REMARKS);
              return p.registry.connect(p.operator).cancel(TOKEN_ID, CANCEL_REASON);
            },
          ],
        ];
        for (const [event, fixture, act] of cases) {
          const platform = await loadFixture(fixture);
          const { documents, operator } = platform;
          await expect(act(platform), event)
            .to.emit(documents, "DocumentPhaseChanged")
            .withArgs(TOKEN_ID, DocPhase.Locked);
          expect((await documents.documentsOf(TOKEN_ID)).phase, event).to.equal(DocPhase.Locked);
          await expect(documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2)), event)
            .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
            .withArgs(TOKEN_ID);
        }
      });
    });
  });

  describe("setReviewRegistry", function () {
    it("reverts with AccessControlUnauthorizedAccount when the caller lacks DEFAULT_ADMIN_ROLE", async function () {
      const { unwired, admin, operator, stranger } = await loadFixture(deployUnwiredDocumentRegistry);
      for (const caller of [admin, operator, stranger]) {
        await expect(unwired.connect(caller).setReviewRegistry(stranger.address))
          .to.be.revertedWithCustomError(unwired, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.DEFAULT_ADMIN);
      }
    });

    describe("when no review registry is set", function () {
      it("starts unset", async function () {
        const { unwired } = await loadFixture(deployUnwiredDocumentRegistry);
        expect(await unwired.reviewRegistry()).to.equal(ethers.ZeroAddress);
      });

      it("emits ReviewRegistrySet and stores the registry", async function () {
        const { unwired, registry, deployer } = await loadFixture(deployUnwiredDocumentRegistry);
        const registryAddress = await registry.getAddress();
        await expect(unwired.connect(deployer).setReviewRegistry(registryAddress))
          .to.emit(unwired, "ReviewRegistrySet")
          .withArgs(registryAddress);
        expect(await unwired.reviewRegistry()).to.equal(registryAddress);
      });
    });

    it("reverts with DocumentInvalidReviewRegistry and leaves it unset when the registry is the zero address", async function () {
      const { unwired, deployer } = await loadFixture(deployUnwiredDocumentRegistry);
      await expect(unwired.connect(deployer).setReviewRegistry(ethers.ZeroAddress))
        .to.be.revertedWithCustomError(unwired, "DocumentInvalidReviewRegistry")
        .withArgs(ethers.ZeroAddress);
      expect(await unwired.reviewRegistry()).to.equal(ethers.ZeroAddress);
    });

    describe("when a review registry is already set", function () {
      it("reverts with DocumentReviewRegistryAlreadySet naming the current registry", async function () {
        const { unwired, registry, deployer, stranger } = await loadFixture(deployUnwiredDocumentRegistry);
        const registryAddress = await registry.getAddress();
        await unwired.connect(deployer).setReviewRegistry(registryAddress);
        await expect(unwired.connect(deployer).setReviewRegistry(stranger.address))
          .to.be.revertedWithCustomError(unwired, "DocumentReviewRegistryAlreadySet")
          .withArgs(registryAddress);
      });

      it("reverts with DocumentReviewRegistryAlreadySet on the platform's wired registry", async function () {
        const { documents, registry, deployer, stranger } = await loadFixture(deployPlatform);
        const registryAddress = await registry.getAddress();
        expect(await documents.reviewRegistry()).to.equal(registryAddress);
        await expect(documents.connect(deployer).setReviewRegistry(stranger.address))
          .to.be.revertedWithCustomError(documents, "DocumentReviewRegistryAlreadySet")
          .withArgs(registryAddress);
      });
    });
  });

  describe("anchorOf", function () {
    it("returns the record of a first version, with the anchoring block's number and timestamp", async function () {
      const { documents, operator } = await loadFixture(deployOpenRequest);
      const hash = sha("fourth document");
      const tx = await documents.connect(operator).anchorDocument(TOKEN_ID, uuid(4), code("ID"), hash);
      const { blockNumber, timestamp } = await blockOf(tx);
      const [anchor, isLatest] = await documents.anchorOf(TOKEN_ID, hash);
      expect(asAnchor(anchor)).to.deep.equal({
        documentId: uuid(4),
        tokenId: TOKEN_ID,
        docIndex: 3n,
        version: 1n,
        blockNumber,
        timestamp,
      });
      expect(isLatest).to.equal(true);
    });

    it("returns the record of a later version, keeping the document id and index", async function () {
      const { documents, operator } = await loadFixture(deployOpenRequest);
      const tx = await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(1, 1), docHash(1, 2));
      const { blockNumber, timestamp } = await blockOf(tx);
      const [anchor, isLatest] = await documents.anchorOf(TOKEN_ID, docHash(1, 2));
      expect(asAnchor(anchor)).to.deep.equal({
        documentId: DOC_IDS[1],
        tokenId: TOKEN_ID,
        docIndex: 1n,
        version: 2n,
        blockNumber,
        timestamp,
      });
      expect(isLatest).to.equal(true);
    });

    it("reports a superseded version as not latest and keeps its record", async function () {
      const { documents, operator } = await loadFixture(deployDraftRequest);
      const tx = await documents.connect(operator).anchorDocument(TOKEN_ID, DOC_IDS[0], DOC_TYPES[0], docHash(0, 1));
      const { blockNumber, timestamp } = await blockOf(tx);
      await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2));
      const [anchor, isLatest] = await documents.anchorOf(TOKEN_ID, docHash(0, 1));
      expect(asAnchor(anchor)).to.deep.equal({
        documentId: DOC_IDS[0],
        tokenId: TOKEN_ID,
        docIndex: 0n,
        version: 1n,
        blockNumber,
        timestamp,
      });
      expect(isLatest).to.equal(false);
      expect((await documents.anchorOf(TOKEN_ID, docHash(0, 2))).isLatest).to.equal(true);
    });

    it("reverts with DocumentUnknownHash for an unknown hash", async function () {
      const { documents } = await loadFixture(deployOpenRequest);
      await expect(documents.anchorOf(TOKEN_ID, sha("unknown")))
        .to.be.revertedWithCustomError(documents, "DocumentUnknownHash")
        .withArgs(TOKEN_ID, sha("unknown"));
      await expect(documents.anchorOf(OTHER_TOKEN_ID, docHash(0, 1)))
        .to.be.revertedWithCustomError(documents, "DocumentUnknownHash")
        .withArgs(OTHER_TOKEN_ID, docHash(0, 1));
    });

    it("reverts with DocumentUnknownHash for the zero hash", async function () {
      const { documents } = await loadFixture(deployOpenRequest);
      await expect(documents.anchorOf(TOKEN_ID, ethers.ZeroHash))
        .to.be.revertedWithCustomError(documents, "DocumentUnknownHash")
        .withArgs(TOKEN_ID, ethers.ZeroHash);
    });
  });

  describe("documentsOf", function () {
    it("returns Unopened, 0 and no versions for a token without documents", async function () {
      const { documents } = await loadFixture(deployDraftRequest);
      expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Unopened, 0n, []]);
      expect(await documents.documentsOf(UNKNOWN_TOKEN_ID)).to.deep.equal([DocPhase.Unopened, 0n, []]);
    });

    it("returns the phase, the count and the latest version of each document", async function () {
      const { documents, operator } = await loadFixture(deployOpenRequest);
      await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 1), docHash(0, 2));
      await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(0, 2), docHash(0, 3));
      await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(2, 1), docHash(2, 2));
      expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 3n, [3n, 1n, 2n]]);
    });

    it("returns all 16 documents", async function () {
      const { documents, operator } = await loadFixture(deployFullRequest);
      await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(15, 1), docHash(15, 2));
      const versions = Array.from({ length: 16 }, (_, i) => (i === 15 ? 2n : 1n));
      expect(await documents.documentsOf(TOKEN_ID)).to.deep.equal([DocPhase.Open, 16n, versions]);
    });
  });

  describe("packedDocumentsOf", function () {
    it("returns 0 for a token without documents", async function () {
      const { documents } = await loadFixture(deployDraftRequest);
      expect(await documents.packedDocumentsOf(TOKEN_ID)).to.equal(0n);
    });

    it("packs the phase in bits 0-7, the count in bits 8-15 and 15 bits per index from bit 16", async function () {
      const { documents, operator } = await loadFixture(deployOpenRequest);
      await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(1, 1), docHash(1, 2));
      const packed = await documents.packedDocumentsOf(TOKEN_ID);
      expect(packed & 0xffn).to.equal(DocPhase.Open);
      expect((packed >> 8n) & 0xffn).to.equal(3n);
      expect((packed >> 16n) & 0x7fffn).to.equal(1n);
      expect((packed >> 31n) & 0x7fffn).to.equal(2n);
      expect((packed >> 46n) & 0x7fffn).to.equal(1n);
      expect(packed >> 61n).to.equal(0n);
      expect(packed).to.equal(DocPhase.Open | (3n << 8n) | (1n << 16n) | (2n << 31n) | (1n << 46n));
    });

    it("packs all 16 documents, the last one ending at bit 255", async function () {
      const { documents, operator } = await loadFixture(deployFullRequest);
      const versions = Array.from({ length: 16 }, () => 1n);
      for (const [index, version] of [
        [0, 2],
        [7, 3],
        [15, 4],
      ]) {
        for (let v = 2; v <= version; v++) {
          await documents.connect(operator).anchorVersion(TOKEN_ID, docHash(index, v - 1), docHash(index, v));
        }
        versions[index] = BigInt(version);
      }
      const packed = await documents.packedDocumentsOf(TOKEN_ID);
      expect(packed).to.equal(pack(DocPhase.Open, versions));
      expect(packed >> 241n).to.equal(4n);
      const [phase, count, latestVersions] = await documents.documentsOf(TOKEN_ID);
      expect([phase, count, [...latestVersions]]).to.deep.equal([DocPhase.Open, 16n, versions]);
    });

    it("reflects the phase set by the approval registry", async function () {
      const { documents } = await loadFixture(deploySubmittedRequest);
      expect(await documents.packedDocumentsOf(TOKEN_ID)).to.equal(pack(DocPhase.Review, [1n, 1n, 1n]));
    });
  });
});
