import { expect } from "chai";
import type { BaseContract, ContractTransactionResponse, Result } from "ethers";
import {
  BUILDING_PERMIT,
  code,
  connection,
  COMMITMENT,
  Custody,
  Completion,
  Decision,
  deploySubmittedRequest,
  deploySubmittedRequestWith,
  deployWithReferenceWorkflow,
  DocPhase,
  ethers,
  Execution,
  latestVersions,
  loadFixture,
  networkHelpers,
  OnRejection,
  OnTimeout,
  Phase,
  ROLES,
  sha,
  stage,
  Status,
  timestampOf,
  uuid,
  Validity,
  withVersion,
  VALIDITY_SECONDS,
} from "./helpers/fixtures.ts";

// The review of a request by the ApprovalRegistry: decisions, completion rules, rejections, requests for
// changes, cancellation, timeouts and the invalidation of approvals by new document versions.

const REMARKS = ethers.id("remarks");
const ID = { A: 1n, B: 2n, C: 3n, D: 4n, E: 5n, F: 6n } as const;
const Cause = { Rejection: 0n, Timeout: 1n } as const;
const Reset = { Resubmitted: 0n, EscalationReturned: 1n, StageRetried: 2n, StageReopened: 3n } as const;
const HOUR = 3600n;

// ------------------------------------------------------------------------------------------------ fixtures

/** Reference workflow (SEQUENTIAL [A, B], then PARALLEL [C, D]), token 1 minted with three documents, not submitted. */
async function deployDraftRequest() {
  const platform = await deployWithReferenceWorkflow();
  const { token, documents, operator, applicant } = platform;
  await token.connect(operator).mint(applicant.address, 1n, BUILDING_PERMIT, COMMITMENT);
  for (let i = 0; i < 3; i++) {
    await documents.connect(operator).anchorDocument(1n, uuid(i + 1), code(`DOC_${i}`), sha(`doc-${i}-v1`));
  }
  return platform;
}

/** Reference request submitted (token 1) and token 2 minted as a Draft without documents. */
async function deploySubmittedAndDraftRequests() {
  const platform = await deploySubmittedRequest();
  await platform.token.connect(platform.operator).mint(platform.applicant.address, 2n, BUILDING_PERMIT, COMMITMENT);
  return platform;
}

/** Reference request in stage 1: D approved (doc 2), then C requested changes (docs 0 and 1). */
async function deployChangesRequested() {
  const platform = await deploySubmittedRequest();
  const { registry, departments } = platform;
  await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
  await registry.connect(departments.B).approve(1n, 0b010, await latestVersions(registry, 1n), REMARKS);
  await registry.connect(departments.D).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
  await registry.connect(departments.C).requestChanges(1n, 0b011, await latestVersions(registry, 1n), REMARKS);
  return platform;
}

/** Stage 0 PARALLEL ANY [A, B, C]; stage 1 PARALLEL ANY [D, E, F] with E mandatory; licences never expire. */
async function deployAnyRequest() {
  return deploySubmittedRequestWith(
    [
      stage({ executionType: Execution.Parallel, completion: Completion.Any, departments: ["A", "B", "C"] }),
      stage({
        executionType: Execution.Parallel,
        completion: Completion.Any,
        mandatoryMask: 0b010,
        departments: ["D", "E", "F"],
      }),
    ],
    0n,
  );
}

/** Stage 0 SEQUENTIAL 2-of-[A, B, C]; stage 1 PARALLEL 2-of-[D, E, F] with F mandatory. */
async function deployThresholdRequest() {
  return deploySubmittedRequestWith([
    stage({ completion: Completion.Threshold, threshold: 2, departments: ["A", "B", "C"] }),
    stage({
      executionType: Execution.Parallel,
      completion: Completion.Threshold,
      threshold: 2,
      mandatoryMask: 0b100,
      departments: ["D", "E", "F"],
    }),
  ]);
}

/** Stage 0 [E]; stage 1 PARALLEL [A, B, C] whose rejections retry the stage. */
async function deployRetryStageRequest() {
  const platform = await deploySubmittedRequestWith([
    stage({ departments: ["E"] }),
    stage({ executionType: Execution.Parallel, onRejection: OnRejection.RetryStage, departments: ["A", "B", "C"] }),
  ]);
  await platform.registry
    .connect(platform.departments.E)
    .approve(1n, 0b111, await latestVersions(platform.registry, 1n), REMARKS);
  return platform;
}

/** Stage 0 PARALLEL [A, B, C] whose rejections are escalated. */
async function deployEscalationRequest() {
  return deploySubmittedRequestWith([
    stage({ executionType: Execution.Parallel, onRejection: OnRejection.Escalate, departments: ["A", "B", "C"] }),
  ]);
}

/** Stage 0 PARALLEL [A, B] notifying after an hour; stage 1 [C] notifying after two hours. */
async function deployNotifyRequest() {
  return deploySubmittedRequestWith([
    stage({
      executionType: Execution.Parallel,
      onTimeout: OnTimeout.Notify,
      timeoutSeconds: Number(HOUR),
      departments: ["A", "B"],
    }),
    stage({ onTimeout: OnTimeout.Notify, timeoutSeconds: Number(2n * HOUR), departments: ["C"] }),
  ]);
}

/** Stage 0 PARALLEL [A, B] escalated after an hour. */
async function deployTimeoutEscalationRequest() {
  return deploySubmittedRequestWith([
    stage({
      executionType: Execution.Parallel,
      onTimeout: OnTimeout.Escalate,
      timeoutSeconds: Number(HOUR),
      departments: ["A", "B"],
    }),
  ]);
}

/** Stage 0 [A] rejected automatically after an hour. */
async function deployAutoRejectRequest() {
  return deploySubmittedRequestWith([
    stage({ onTimeout: OnTimeout.AutoReject, timeoutSeconds: Number(HOUR), departments: ["A"] }),
  ]);
}

/** Stage 0 PARALLEL [A, B]; stage 1 [C]; stage 2 PARALLEL [D, E, F]. */
async function deployThreeStageRequest() {
  return deploySubmittedRequestWith([
    stage({ executionType: Execution.Parallel, departments: ["A", "B"] }),
    stage({ departments: ["C"] }),
    stage({ executionType: Execution.Parallel, departments: ["D", "E", "F"] }),
  ]);
}

// ------------------------------------------------------------------------------------------------ helpers

/** A struct or multi-value return (an ethers Result) as plain nested arrays, for deep equality. */
function plain(result: object) {
  return (result as Result).toArray(true);
}

/** Arguments of every `name` event `contract` emitted in `tx`. */
async function eventsOf(tx: Promise<ContractTransactionResponse>, contract: BaseContract, name: string) {
  const receipt = (await (await tx).wait())!;
  const address = await contract.getAddress();
  return receipt.logs
    .filter((log) => log.address === address)
    .map((log) => contract.interface.parseLog(log))
    .filter((event) => event?.name === name)
    .map((event) => event!.args.toArray());
}

/** DecisionRecorded's arguments for token 1: a custodial department's decision (by its wallet `by`), with REMARKS. */
function recorded(id: bigint, stage: N, decision: N, reason: N, mask: N, packed: N, by: { address: string }) {
  return [1n, id, stage, decision, reason, mask, packed, REMARKS, by.address, Custody.Custodial];
}
type N = bigint | number;

/** Anchors version `version` of document `docIndex` of token 1 (whose hashes are `sha("doc-<i>-v<n>")`). */
function newVersion(platform: Awaited<ReturnType<typeof deploySubmittedRequest>>, docIndex: number, version = 2) {
  return platform.documents
    .connect(platform.operator)
    .anchorVersion(1n, sha(`doc-${docIndex}-v${version - 1}`), sha(`doc-${docIndex}-v${version}`));
}

describe("ApprovalRegistry", function () {
  // ============================================================================================ submit

  describe("submit", function () {
    it("starts the review at stage 0 of the pinned workflow", async function () {
      const { token, documents, registry, operator } = await loadFixture(deployDraftRequest);
      const tx = registry.connect(operator).submit(1n);
      const t = await timestampOf(tx);
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Draft, Status.Submitted, 0, await registry.getAddress());
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Review);
      await expect(tx).to.emit(registry, "ReviewStarted").withArgs(1n, 1n);
      await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 0, t);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.InReview);
      expect((await token.licence(1n)).status).to.equal(Status.Submitted);
      expect((await documents.documentsOf(1n)).phase).to.equal(DocPhase.Review);
      expect(plain(await registry.progressOf(1n))).to.deep.equal([1n, 0n, Phase.InReview, 0n, 0n, t, 0n]);
    });

    it("reverts with ReviewWrongPhase when the request was already submitted", async function () {
      const { registry, operator } = await loadFixture(deploySubmittedRequest);
      await expect(registry.connect(operator).submit(1n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.InReview);
    });

    it("reverts with ReviewWrongPhase and keeps the review (resubmit is the way back) when the request awaits resubmission", async function () {
      const { registry, operator, departments } = await loadFixture(deploySubmittedRequest);
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), ethers.ZeroHash);
      await registry
        .connect(departments.B)
        .requestChanges(1n, 0b001, await latestVersions(registry, 1n), ethers.ZeroHash);
      const before = await registry.progressOf(1n);
      await expect(registry.connect(operator).submit(1n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.AwaitingResubmission);
      expect(await registry.progressOf(1n)).to.deep.equal(before);
      const [, statuses] = await registry.decisionsOf(1n, 0);
      expect(statuses).to.deep.equal([Decision.Approved, Decision.ChangesRequested]);
    });

    it("reverts with ERC721NonexistentToken on the token when the token does not exist", async function () {
      const { token, registry, operator } = await loadFixture(deployWithReferenceWorkflow);
      await expect(registry.connect(operator).submit(9n))
        .to.be.revertedWithCustomError(token, "ERC721NonexistentToken")
        .withArgs(9n);
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller is not an operator", async function () {
      const { registry, admin, applicant } = await loadFixture(deployDraftRequest);
      for (const caller of [admin, applicant]) {
        await expect(registry.connect(caller).submit(1n))
          .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.OPERATOR);
      }
    });
  });

  // ============================================================================================ decisions

  describe("approve", function () {
    it("records the approval with the document versions reviewed", async function () {
      const { documents, registry, departments } = await loadFixture(deploySubmittedRequest);
      // phase Review | 3 documents | version 1 of documents 0, 1 and 2 (15 bits each from bit 16)
      const packed = await documents.packedDocumentsOf(1n);
      expect(packed).to.equal(2n | (3n << 8n) | (1n << 16n) | (1n << 31n) | (1n << 46n));
      const tx = registry.connect(departments.A).approve(1n, 0b101, await latestVersions(registry, 1n), REMARKS);
      await expect(tx)
        .to.emit(registry, "DecisionRecorded")
        .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b101, packed, departments.A));
      await expect(tx).not.to.emit(registry, "StageCompleted");
      await expect(tx).not.to.emit(registry, "ReviewPhaseChanged");
      expect(plain(await registry.decisionsOf(1n, 0))).to.deep.equal([
        [ID.A, ID.B],
        [Decision.Approved, Decision.Pending],
        [0b101n, 0n],
      ]);
      // 19 bits per position: 3-bit status, then the reviewed mask.
      expect((await registry.progressOf(1n)).ledger).to.equal(Decision.Approved | (0b101n << 3n));
    });

    describe("when a reviewed document got a new version before the decision was mined", function () {
      it("reverts with ReviewStaleDocuments naming the document and the hash reviewed", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, departments } = platform;
        // The department reviews the versions it has in front of it, then an update races its approval.
        const reviewed = await documents.packedDocumentsOf(1n);
        await newVersion(platform, 1);
        const latest = await documents.packedDocumentsOf(1n);
        expect(latest).to.equal(2n | (3n << 8n) | (1n << 16n) | (2n << 31n) | (1n << 46n));
        for (const mask of [0b010, 0b111, 0]) {
          await expect(registry.connect(departments.A).approve(1n, mask, reviewed, REMARKS))
            .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
            .withArgs(1n, 1, sha("doc-1-v1"));
        }
        await expect(registry.connect(departments.A).reject(1n, 1, 0b010, reviewed, REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
          .withArgs(1n, 1, sha("doc-1-v1"));
        await expect(registry.connect(departments.A).requestChanges(1n, 0b010, reviewed, REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
          .withArgs(1n, 1, sha("doc-1-v1"));
        expect((await registry.decisionsOf(1n, 0))[1]).to.deep.equal([Decision.Pending, Decision.Pending]);

        // Having looked at version 2, the department approves it: the versions it named are on chain.
        await expect(registry.connect(departments.A).approve(1n, 0b010, latest, REMARKS))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b010, latest, departments.A));
      });

      it("reverts with ReviewStaleDocuments when the update is mined first in the same block", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, operator, departments } = platform;
        const reviewed = await documents.packedDocumentsOf(1n);
        await connection.provider.request({ method: "evm_setAutomine", params: [false] });
        try {
          const update = await documents.connect(operator).anchorVersion(1n, sha("doc-2-v1"), sha("doc-2-v2"));
          const approval = await registry
            .connect(departments.A)
            .approve(1n, 0b100, reviewed, REMARKS, { gasLimit: 300_000n });
          await networkHelpers.mine();
          expect((await ethers.provider.getTransactionReceipt(update.hash))!.status).to.equal(1);
          expect((await ethers.provider.getTransactionReceipt(approval.hash))!.status).to.equal(0);
        } finally {
          await connection.provider.request({ method: "evm_setAutomine", params: [true] });
        }
        await expect(registry.connect(departments.A).approve(1n, 0b100, reviewed, REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
          .withArgs(1n, 2, sha("doc-2-v1"));
        expect((await registry.decisionsOf(1n, 0))[1]).to.deep.equal([Decision.Pending, Decision.Pending]);
      });

      it("ignores updates of documents the decision does not cover", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, departments } = platform;
        const reviewed = await documents.packedDocumentsOf(1n);
        await newVersion(platform, 1);
        const latest = await documents.packedDocumentsOf(1n);
        await expect(registry.connect(departments.A).approve(1n, 0b101, reviewed, REMARKS))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b101, latest, departments.A));
      });
    });

    it("reverts with ReviewStaleDocuments naming that hash when a hash named was never anchored for the document", async function () {
      const { documents, registry, departments } = await loadFixture(deploySubmittedRequest);
      const named = withVersion(await documents.packedDocumentsOf(1n), 2, 5n);
      await expect(registry.connect(departments.A).approve(1n, 0b100, named, REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
        .withArgs(1n, 2, ethers.id("never anchored: document 2 version 5"));
    });

    it("completes a stage and starts the next one", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
      const tx = registry.connect(departments.B).approve(1n, 0b010, await latestVersions(registry, 1n), REMARKS);
      const t = await timestampOf(tx);
      await expect(tx).to.emit(registry, "StageCompleted").withArgs(1n, 0);
      await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 1, t);
      expect(plain(await registry.progressOf(1n))).to.deep.equal([1n, 1n, Phase.InReview, 1n, 0n, t, 0n]);
      expect(plain(await registry.decisionsOf(1n, 0))).to.deep.equal([
        [ID.A, ID.B],
        [Decision.Approved, Decision.Approved],
        [0b001n, 0b010n],
      ]);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.C, ID.D]);
    });

    it("issues the licence and locks the documents on the final approval", async function () {
      const platform = await loadFixture(deploySubmittedRequest);
      const { token, documents, registry, departments } = platform;
      await registry.connect(departments.A).approve(1n, 0b111, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.B).approve(1n, 0b111, await latestVersions(registry, 1n), REMARKS);
      // PARALLEL: D may decide before C.
      await registry.connect(departments.D).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.C]);
      const tx = registry.connect(departments.C).approve(1n, 0b011, await latestVersions(registry, 1n), REMARKS);
      const t = await timestampOf(tx);
      await expect(tx).to.emit(registry, "StageCompleted").withArgs(1n, 1);
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Submitted, Status.Approved, 0, await registry.getAddress());
      await expect(tx)
        .to.emit(token, "LicenceIssued")
        .withArgs(1n, t, t + VALIDITY_SECONDS);
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Closed);
      await expect(tx).not.to.emit(registry, "StageStarted");

      const licence = await token.licence(1n);
      expect(licence.status).to.equal(Status.Approved);
      expect(licence.expiresAt).to.equal(t + VALIDITY_SECONDS);
      expect((await token.validityOf(1n)).validity).to.equal(Validity.Valid);
      const progress = await registry.progressOf(1n);
      expect([progress.stage, progress.phase]).to.deep.equal([1n, Phase.Closed]);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([]);
      await expect(newVersion(platform, 0))
        .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
        .withArgs(1n);
    });

    it("reverts with NotADepartment when the caller is not a department", async function () {
      const { registry, stranger } = await loadFixture(deploySubmittedRequest);
      await expect(registry.connect(stranger).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(stranger.address);
    });

    it("reverts with ReviewWrongPhase when the request was not submitted", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedAndDraftRequests);
      await expect(registry.connect(departments.A).approve(2n, 0, await latestVersions(registry, 2n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(2n, Phase.NotStarted);
    });

    it("reverts with ReviewNotRequired when the department is not in the current stage", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      for (const name of ["C", "E"] as const) {
        await expect(registry.connect(departments[name]).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
          .withArgs(1n, 0, ID[name]);
      }
    });

    it("reverts with ReviewNotYourTurn when it is not the department's turn in a SEQUENTIAL stage", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewNotYourTurn")
        .withArgs(1n, 0, ID.B, 0);
    });

    it("reverts with ReviewAlreadyDecided when the department already decided", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await expect(registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewAlreadyDecided")
        .withArgs(1n, 0, ID.A, Decision.Approved);
      await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.D).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await expect(registry.connect(departments.D).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewAlreadyDecided")
        .withArgs(1n, 1, ID.D, Decision.Approved);
    });

    it("reverts with ReviewUnknownDocuments when the reviewed mask names documents the request does not have", async function () {
      const { registry, operator, departments } = await loadFixture(deploySubmittedAndDraftRequests);
      await expect(registry.connect(departments.A).approve(1n, 0b1000, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewUnknownDocuments")
        .withArgs(1n, 0b1000, 3);
      // A request without documents: any reviewed document is unknown.
      await registry.connect(operator).submit(2n);
      await expect(registry.connect(departments.A).approve(2n, 0b1, await latestVersions(registry, 2n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewUnknownDocuments")
        .withArgs(2n, 0b1, 0);
    });

    it("reverts with ReviewWrongPhase when the request is closed", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      for (const name of ["A", "B", "C", "D"] as const)
        await registry.connect(departments[name]).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await expect(registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.Closed);
    });
  });

  describe("completion rules", function () {
    describe("ANY", function () {
      it("completes the stage on one approval", async function () {
        const { registry, departments } = await loadFixture(deployAnyRequest);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A, ID.B, ID.C]);
        const tx = registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(tx).to.emit(registry, "StageCompleted").withArgs(1n, 0);
        await expect(tx)
          .to.emit(registry, "StageStarted")
          .withArgs(1n, 1, await timestampOf(tx));
        expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([
          Decision.Pending,
          Decision.Approved,
          Decision.Pending,
        ]);
        await expect(registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
          .withArgs(1n, 1, ID.A);
      });

      it("still requires every mandatory department", async function () {
        const { token, registry, departments } = await loadFixture(deployAnyRequest);
        await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(
          registry.connect(departments.D).approve(1n, 0, await latestVersions(registry, 1n), REMARKS),
        ).not.to.emit(registry, "StageCompleted");
        await expect(
          registry.connect(departments.F).approve(1n, 0, await latestVersions(registry, 1n), REMARKS),
        ).not.to.emit(registry, "StageCompleted");
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.E]);
        const tx = registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(tx).to.emit(registry, "StageCompleted").withArgs(1n, 1);
        // Validity 0: the licence never expires.
        await expect(tx)
          .to.emit(token, "LicenceIssued")
          .withArgs(1n, await timestampOf(tx), 0n);
        expect((await token.licence(1n)).expiresAt).to.equal(0n);
        expect((await token.validityOf(1n)).validity).to.equal(Validity.Valid);
      });

      it("completes on the mandatory department's approval alone", async function () {
        const { token, registry, departments } = await loadFixture(deployAnyRequest);
        await registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.emit(registry, "StageCompleted")
          .withArgs(1n, 1);
        expect((await token.licence(1n)).status).to.equal(Status.Approved);
      });
    });

    describe("THRESHOLD", function () {
      it("completes a SEQUENTIAL stage after k approvals in order", async function () {
        const { registry, departments } = await loadFixture(deployThresholdRequest);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
        await expect(
          registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS),
        ).not.to.emit(registry, "StageCompleted");
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.B]);
        await expect(registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotYourTurn")
          .withArgs(1n, 0, ID.C, 1);
        await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.emit(registry, "StageCompleted")
          .withArgs(1n, 0);
        expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([
          Decision.Approved,
          Decision.Approved,
          Decision.Pending,
        ]);
      });

      it("requires the mandatory department on top of k approvals", async function () {
        const { token, registry, departments } = await loadFixture(deployThresholdRequest);
        await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.D).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(
          registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS),
        ).not.to.emit(registry, "StageCompleted");
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.F]);
        await expect(registry.connect(departments.F).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.emit(registry, "StageCompleted")
          .withArgs(1n, 1);
        expect((await token.licence(1n)).status).to.equal(Status.Approved);
      });

      it("completes with k approvals that include the mandatory department", async function () {
        const { token, registry, departments } = await loadFixture(deployThresholdRequest);
        await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(
          registry.connect(departments.F).approve(1n, 0, await latestVersions(registry, 1n), REMARKS),
        ).not.to.emit(registry, "StageCompleted");
        await expect(registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.emit(registry, "StageCompleted")
          .withArgs(1n, 1);
        expect((await token.licence(1n)).status).to.equal(Status.Approved);
      });
    });
  });

  describe("reject", function () {
    it("reverts with ReviewInvalidReason when the reason code is not 1..5", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      for (const reason of [0, 6]) {
        await expect(registry.connect(departments.A).reject(1n, reason, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewInvalidReason")
          .withArgs(reason);
      }
    });

    it("reverts like an approval when the caller cannot decide now", async function () {
      const { registry, departments, stranger } = await loadFixture(deploySubmittedRequest);
      await expect(registry.connect(stranger).reject(1n, 1, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(stranger.address);
      await expect(registry.connect(departments.B).reject(1n, 1, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewNotYourTurn")
        .withArgs(1n, 0, ID.B, 0);
      await expect(registry.connect(departments.D).reject(1n, 1, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
        .withArgs(1n, 0, ID.D);
      await expect(registry.connect(departments.A).reject(1n, 1, 0b10000, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewUnknownDocuments")
        .withArgs(1n, 0b10000, 3);
    });

    it("rejects the request, closes the review and locks the documents when the stage fails the request (FAIL_REQUEST)", async function () {
      const platform = await loadFixture(deploySubmittedRequest);
      const { token, documents, registry, departments } = platform;
      const packed = await documents.packedDocumentsOf(1n);
      const tx = registry.connect(departments.A).reject(1n, 3, 0b011, await latestVersions(registry, 1n), REMARKS);
      await expect(tx)
        .to.emit(registry, "DecisionRecorded")
        .withArgs(...recorded(ID.A, 0, Decision.Rejected, 3, 0b011, packed, departments.A));
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Submitted, Status.Rejected, 3, await registry.getAddress());
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Closed);
      await expect(tx).not.to.emit(registry, "DecisionsReset");

      const licence = await token.licence(1n);
      expect([licence.status, licence.reasonCode]).to.deep.equal([Status.Rejected, 3n]);
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
      expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([Decision.Rejected, Decision.Pending]);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([]);
      await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.Closed);
      await expect(newVersion(platform, 0))
        .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
        .withArgs(1n);
    });

    describe("when the stage is retried (RETRY_STAGE)", function () {
      it("clears the stage's decisions and waits for the applicant", async function () {
        const { token, documents, registry, departments } = await loadFixture(deployRetryStageRequest);
        await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        const packed = await documents.packedDocumentsOf(1n);
        const tx = registry.connect(departments.B).reject(1n, 2, 0b010, await latestVersions(registry, 1n), REMARKS);
        await expect(tx)
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.B, 1, Decision.Rejected, 2, 0b010, packed, departments.B));
        await expect(tx).to.emit(registry, "StageRetried").withArgs(1n, 1);
        // A (position 0) approved and B (position 1) rejected: both are cleared; C had not decided.
        await expect(tx).to.emit(registry, "DecisionsReset").withArgs(1n, 1, 0b011, Reset.StageRetried);
        await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.AwaitingResubmission);
        await expect(tx)
          .to.emit(token, "LicenceStatusChanged")
          .withArgs(1n, Status.Submitted, Status.PendingResubmission, 2, await registry.getAddress());
        await expect(tx).not.to.emit(documents, "DocumentPhaseChanged");

        const progress = await registry.progressOf(1n);
        expect([progress.stage, progress.phase, progress.ledger]).to.deep.equal([1n, Phase.AwaitingResubmission, 0n]);
        expect(plain(await registry.decisionsOf(1n, 1))).to.deep.equal([
          [ID.A, ID.B, ID.C],
          [Decision.Pending, Decision.Pending, Decision.Pending],
          [0n, 0n, 0n],
        ]);
        // The completed stage keeps its decisions.
        expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([Decision.Approved]);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([]);
        await expect(registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
          .withArgs(1n, Phase.AwaitingResubmission);
      });

      it("restarts the stage with every department pending after resubmission", async function () {
        const { token, registry, operator, departments } = await loadFixture(deployRetryStageRequest);
        await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.B).reject(1n, 2, 0b010, await latestVersions(registry, 1n), REMARKS);
        const tx = registry.connect(operator).resubmit(1n);
        const t = await timestampOf(tx);
        await expect(tx).to.emit(registry, "Resubmitted").withArgs(1n, 1);
        await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 1, t);
        await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.InReview);
        // The retry already cleared the stage: nothing left to reset.
        await expect(tx).not.to.emit(registry, "DecisionsReset");
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A, ID.B, ID.C]);
        await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        await expect(registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.emit(registry, "StageCompleted")
          .withArgs(1n, 1);
        expect((await token.licence(1n)).status).to.equal(Status.Approved);
      });
    });

    it("escalates the stage to an administrator and locks the documents when the stage escalates rejections (ESCALATE)", async function () {
      const platform = await loadFixture(deployEscalationRequest);
      const { token, documents, registry, departments } = platform;
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
      const packed = await documents.packedDocumentsOf(1n);
      const tx = registry.connect(departments.B).reject(1n, 1, 0b010, await latestVersions(registry, 1n), REMARKS);
      await expect(tx)
        .to.emit(registry, "DecisionRecorded")
        .withArgs(...recorded(ID.B, 0, Decision.Rejected, 1, 0b010, packed, departments.B));
      await expect(tx).to.emit(registry, "StageEscalated").withArgs(1n, 0, Cause.Rejection, ID.B);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Escalated);
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
      await expect(tx).not.to.emit(token, "LicenceStatusChanged");

      expect((await token.licence(1n)).status).to.equal(Status.Submitted);
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.Escalated);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([]);
      await expect(registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.Escalated);
      await expect(newVersion(platform, 0))
        .to.be.revertedWithCustomError(documents, "DocumentsNotEditable")
        .withArgs(1n);
    });
  });

  describe("resolveEscalation", function () {
    async function deployEscalatedRequest() {
      const platform = await deployEscalationRequest();
      await platform.registry
        .connect(platform.departments.A)
        .approve(1n, 0b001, await latestVersions(platform.registry, 1n), REMARKS);
      await platform.registry
        .connect(platform.departments.B)
        .reject(1n, 1, 0b010, await latestVersions(platform.registry, 1n), REMARKS);
      return platform;
    }

    describe("when the administrator upholds the rejection", function () {
      it("rejects the request with the administrator's reason", async function () {
        const { token, documents, registry, admin } = await loadFixture(deployEscalatedRequest);
        const tx = registry.connect(admin).resolveEscalation(1n, true, 4);
        await expect(tx).to.emit(registry, "EscalationResolved").withArgs(1n, 0, true, 4);
        await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Closed);
        await expect(tx).not.to.emit(registry, "DecisionsReset");
        await expect(tx)
          .to.emit(token, "LicenceStatusChanged")
          .withArgs(1n, Status.Submitted, Status.Rejected, 4, await registry.getAddress());
        await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
        const licence = await token.licence(1n);
        expect([licence.status, licence.reasonCode]).to.deep.equal([Status.Rejected, 4n]);
        expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
      });

      it("reverts with ReviewInvalidReason for reason 0", async function () {
        const { registry, admin } = await loadFixture(deployEscalatedRequest);
        await expect(registry.connect(admin).resolveEscalation(1n, true, 0))
          .to.be.revertedWithCustomError(registry, "ReviewInvalidReason")
          .withArgs(0);
      });
    });

    it("puts the rejecting department back to Pending and resumes the review when the administrator sends the rejection back", async function () {
      const { token, documents, registry, admin, departments } = await loadFixture(deployEscalatedRequest);
      const tx = registry.connect(admin).resolveEscalation(1n, false, 5);
      const t = await timestampOf(tx);
      await expect(tx).to.emit(registry, "EscalationResolved").withArgs(1n, 0, false, 0);
      await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 0, t);
      // B (position 1) rejected: its rejection goes back to Pending.
      await expect(tx).to.emit(registry, "DecisionsReset").withArgs(1n, 0, 0b10, Reset.EscalationReturned);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.InReview);
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Review);
      await expect(tx).not.to.emit(token, "LicenceStatusChanged");

      const progress = await registry.progressOf(1n);
      expect([progress.phase, progress.stageStartedAt]).to.deep.equal([Phase.InReview, t]);
      expect(plain(await registry.decisionsOf(1n, 0))).to.deep.equal([
        [ID.A, ID.B, ID.C],
        [Decision.Approved, Decision.Pending, Decision.Pending],
        [0b001n, 0n, 0n],
      ]);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.B, ID.C]);
      await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      expect((await token.licence(1n)).status).to.equal(Status.Approved);
    });

    it("reverts with ReviewWrongPhase when the request is not escalated", async function () {
      const { registry, admin } = await loadFixture(deploySubmittedAndDraftRequests);
      await expect(registry.connect(admin).resolveEscalation(1n, true, 1))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.InReview);
      await expect(registry.connect(admin).resolveEscalation(2n, false, 0))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(2n, Phase.NotStarted);
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller is not an admin", async function () {
      const { registry, operator, keeper } = await loadFixture(deployEscalatedRequest);
      for (const caller of [operator, keeper]) {
        await expect(registry.connect(caller).resolveEscalation(1n, true, 1))
          .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.ADMIN);
      }
    });
  });

  // ============================================================================================ applicant

  describe("requestChanges", function () {
    it("records the request for changes and waits for the applicant", async function () {
      const { token, documents, registry, departments } = await loadFixture(deploySubmittedRequest);
      await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.D).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
      const packed = await documents.packedDocumentsOf(1n);
      const tx = registry.connect(departments.C).requestChanges(1n, 0b011, await latestVersions(registry, 1n), REMARKS);
      await expect(tx)
        .to.emit(registry, "DecisionRecorded")
        .withArgs(...recorded(ID.C, 1, Decision.ChangesRequested, 0, 0b011, packed, departments.C));
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Submitted, Status.PendingResubmission, 0, await registry.getAddress());
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.AwaitingResubmission);
      await expect(tx).not.to.emit(documents, "DocumentPhaseChanged");
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.AwaitingResubmission);
      expect((await token.licence(1n)).status).to.equal(Status.PendingResubmission);
      expect((await registry.decisionsOf(1n, 1)).statuses).to.deep.equal([
        Decision.ChangesRequested,
        Decision.Approved,
      ]);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([]);
    });

    it("reverts decisions with ReviewWrongPhase when changes are already requested", async function () {
      const { registry, departments } = await loadFixture(deployChangesRequested);
      await expect(registry.connect(departments.C).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.AwaitingResubmission);
    });

    it("reverts like an approval when the caller cannot decide now", async function () {
      const { registry, departments, operator } = await loadFixture(deploySubmittedRequest);
      await expect(registry.connect(operator).requestChanges(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "NotADepartment")
        .withArgs(operator.address);
      await expect(registry.connect(departments.B).requestChanges(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewNotYourTurn")
        .withArgs(1n, 0, ID.B, 0);
      await expect(
        registry.connect(departments.A).requestChanges(1n, 0xffff, await latestVersions(registry, 1n), REMARKS),
      )
        .to.be.revertedWithCustomError(registry, "ReviewUnknownDocuments")
        .withArgs(1n, 0xffff, 3);
    });
  });

  describe("resubmit", function () {
    it("resumes the stage: the department that asked decides again, approvals are kept", async function () {
      const { token, registry, operator, departments } = await loadFixture(deployChangesRequested);
      const tx = registry.connect(operator).resubmit(1n);
      const t = await timestampOf(tx);
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.PendingResubmission, Status.Submitted, 0, await registry.getAddress());
      await expect(tx).to.emit(registry, "Resubmitted").withArgs(1n, 1);
      await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 1, t);
      // C (position 0) asked for changes: it decides again; D's approval stands.
      await expect(tx).to.emit(registry, "DecisionsReset").withArgs(1n, 1, 0b01, Reset.Resubmitted);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.InReview);
      const progress = await registry.progressOf(1n);
      expect([progress.stage, progress.phase, progress.stageStartedAt]).to.deep.equal([1n, Phase.InReview, t]);
      expect(plain(await registry.decisionsOf(1n, 1))).to.deep.equal([
        [ID.C, ID.D],
        [Decision.Pending, Decision.Approved],
        [0n, 0b100n],
      ]);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.C]);
      await expect(registry.connect(departments.C).approve(1n, 0b011, await latestVersions(registry, 1n), REMARKS))
        .to.emit(registry, "StageCompleted")
        .withArgs(1n, 1);
      expect((await token.licence(1n)).status).to.equal(Status.Approved);
    });

    it("gives the turn back to the department that asked in a SEQUENTIAL stage", async function () {
      const { documents, registry, operator, departments } = await loadFixture(deploySubmittedRequest);
      await registry.connect(departments.A).requestChanges(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(operator).resubmit(1n);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
      await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
        .to.be.revertedWithCustomError(registry, "ReviewNotYourTurn")
        .withArgs(1n, 0, ID.B, 0);
      const packed = await documents.packedDocumentsOf(1n);
      await expect(registry.connect(departments.A).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS))
        .to.emit(registry, "DecisionRecorded")
        .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b1, packed, departments.A));
    });

    it("reverts with ReviewWrongPhase when the request is not awaiting resubmission", async function () {
      const { registry, operator } = await loadFixture(deploySubmittedAndDraftRequests);
      await expect(registry.connect(operator).resubmit(1n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.InReview);
      await expect(registry.connect(operator).resubmit(2n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(2n, Phase.NotStarted);
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller is not an operator", async function () {
      const { registry, applicant } = await loadFixture(deployChangesRequested);
      await expect(registry.connect(applicant).resubmit(1n))
        .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
        .withArgs(applicant.address, ROLES.OPERATOR);
    });
  });

  describe("cancel", function () {
    it("cancels a Draft and locks its documents", async function () {
      const { token, documents, registry, operator } = await loadFixture(deployDraftRequest);
      const tx = registry.connect(operator).cancel(1n, 9);
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Draft, Status.Cancelled, 9, await registry.getAddress());
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
      // Never submitted: the review phase stays NotStarted.
      await expect(tx).not.to.emit(registry, "ReviewPhaseChanged");
      const licence = await token.licence(1n);
      expect([licence.status, licence.reasonCode]).to.deep.equal([Status.Cancelled, 9n]);
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.NotStarted);
      await expect(registry.connect(operator).submit(1n))
        .to.be.revertedWithCustomError(token, "LicenceInvalidTransition")
        .withArgs(1n, Status.Cancelled, Status.Submitted);
    });

    it("cancels a request awaiting resubmission and closes its review", async function () {
      const { token, documents, registry, operator } = await loadFixture(deployChangesRequested);
      const tx = registry.connect(operator).cancel(1n, 2);
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.PendingResubmission, Status.Cancelled, 2, await registry.getAddress());
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Closed);
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
      expect((await documents.documentsOf(1n)).phase).to.equal(DocPhase.Locked);
      await expect(registry.connect(operator).resubmit(1n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.Closed);
    });

    it("reverts with LicenceInvalidTransition on the token when the request is under review", async function () {
      const { token, registry, operator } = await loadFixture(deploySubmittedRequest);
      await expect(registry.connect(operator).cancel(1n, 1))
        .to.be.revertedWithCustomError(token, "LicenceInvalidTransition")
        .withArgs(1n, Status.Submitted, Status.Cancelled);
    });

    it("reverts with AccessControlUnauthorizedAccount when the caller is not an operator", async function () {
      const { registry, admin } = await loadFixture(deployDraftRequest);
      await expect(registry.connect(admin).cancel(1n, 1))
        .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
        .withArgs(admin.address, ROLES.OPERATOR);
    });
  });

  // ============================================================================================ reads

  describe("pendingDepartmentsOf", function () {
    it("lists only the department whose turn it is in a SEQUENTIAL stage", async function () {
      const { registry, departments } = await loadFixture(deploySubmittedRequest);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
      await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.B]);
    });

    it("lists every undecided department of a PARALLEL stage", async function () {
      const { registry, departments } = await loadFixture(deployThreeStageRequest);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A, ID.B]);
      await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
    });

    it("is empty when the request is not under review", async function () {
      const { registry } = await loadFixture(deploySubmittedAndDraftRequests);
      expect(await registry.pendingDepartmentsOf(2n)).to.deep.equal([]);
      expect(await registry.pendingDepartmentsOf(3n)).to.deep.equal([]);
    });
  });

  describe("decisionsOf", function () {
    it("is empty before submission", async function () {
      const { registry } = await loadFixture(deploySubmittedAndDraftRequests);
      expect(plain(await registry.decisionsOf(2n, 0))).to.deep.equal([[], [], []]);
    });

    it("lists a stage not reached yet as Pending", async function () {
      const { registry } = await loadFixture(deploySubmittedRequest);
      expect(plain(await registry.decisionsOf(1n, 1))).to.deep.equal([
        [ID.C, ID.D],
        [Decision.Pending, Decision.Pending],
        [0n, 0n],
      ]);
    });

    it("is empty past the workflow's last stage", async function () {
      const { registry } = await loadFixture(deploySubmittedRequest);
      expect(plain(await registry.decisionsOf(1n, 2))).to.deep.equal([[], [], []]);
    });
  });

  // ============================================================================================ timeouts

  describe("enforceTimeout", function () {
    it("reverts with AccessControlUnauthorizedAccount when the caller is not a keeper", async function () {
      const { registry, admin, operator, stranger } = await loadFixture(deployNotifyRequest);
      await networkHelpers.time.increase(HOUR);
      for (const caller of [admin, operator, stranger]) {
        await expect(registry.connect(caller).enforceTimeout(1n))
          .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
          .withArgs(caller.address, ROLES.KEEPER);
      }
    });

    it("reverts with TimeoutNotSet when the stage has no timeout", async function () {
      const { registry, keeper } = await loadFixture(deploySubmittedRequest);
      await networkHelpers.time.increase(365 * 24 * 3600);
      await expect(registry.connect(keeper).enforceTimeout(1n))
        .to.be.revertedWithCustomError(registry, "TimeoutNotSet")
        .withArgs(1n, 0);
    });

    it("reverts with ReviewWrongPhase when the request is not under review", async function () {
      const { registry, keeper, operator, departments } = await loadFixture(deployNotifyRequest);
      await registry.connect(departments.A).requestChanges(1n, 0, await latestVersions(registry, 1n), REMARKS);
      await networkHelpers.time.increase(HOUR);
      await expect(registry.connect(keeper).enforceTimeout(1n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.AwaitingResubmission);
      await expect(registry.connect(keeper).enforceTimeout(2n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(2n, Phase.NotStarted);
      // Resubmission restarts the stage's clock.
      const t = await timestampOf(registry.connect(operator).resubmit(1n));
      await expect(registry.connect(keeper).enforceTimeout(1n))
        .to.be.revertedWithCustomError(registry, "TimeoutNotReached")
        .withArgs(1n, 0, t + HOUR);
    });

    it("reverts with TimeoutNotReached until the deadline when the deadline has not passed", async function () {
      const { registry, keeper } = await loadFixture(deployNotifyRequest);
      const deadline = (await registry.progressOf(1n)).stageStartedAt + HOUR;
      await networkHelpers.time.setNextBlockTimestamp(deadline - 1n);
      await expect(registry.connect(keeper).enforceTimeout(1n))
        .to.be.revertedWithCustomError(registry, "TimeoutNotReached")
        .withArgs(1n, 0, deadline);
      await networkHelpers.time.setNextBlockTimestamp(deadline);
      await expect(registry.connect(keeper).enforceTimeout(1n))
        .to.emit(registry, "StageTimedOut")
        .withArgs(1n, 0, OnTimeout.Notify);
    });

    describe("when the stage notifies (NOTIFY)", function () {
      it("emits StageTimedOut once and lets the departments decide", async function () {
        const { token, documents, registry, keeper, departments } = await loadFixture(deployNotifyRequest);
        await networkHelpers.time.increase(HOUR);
        const tx = registry.connect(keeper).enforceTimeout(1n);
        await expect(tx).to.emit(registry, "StageTimedOut").withArgs(1n, 0, OnTimeout.Notify);
        await expect(tx).not.to.emit(registry, "StageEscalated");
        await expect(tx).not.to.emit(registry, "ReviewPhaseChanged");
        await expect(tx).not.to.emit(token, "LicenceStatusChanged");
        const progress = await registry.progressOf(1n);
        expect([progress.phase, progress.flags]).to.deep.equal([Phase.InReview, 1n]);

        await expect(registry.connect(keeper).enforceTimeout(1n))
          .to.be.revertedWithCustomError(registry, "TimeoutAlreadyHandled")
          .withArgs(1n, 0);
        const packed = await documents.packedDocumentsOf(1n);
        await expect(registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b111, packed, departments.A));
        await expect(registry.connect(keeper).enforceTimeout(1n))
          .to.be.revertedWithCustomError(registry, "TimeoutAlreadyHandled")
          .withArgs(1n, 0);
      });

      it("restarts the clock when the next stage starts", async function () {
        const { registry, keeper, departments } = await loadFixture(deployNotifyRequest);
        await networkHelpers.time.increase(HOUR);
        await registry.connect(keeper).enforceTimeout(1n);
        await registry.connect(departments.A).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        const tx = registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        const t = await timestampOf(tx);
        await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 1, t);
        const progress = await registry.progressOf(1n);
        expect([progress.stage, progress.flags, progress.stageStartedAt]).to.deep.equal([1n, 0n, t]);

        await expect(registry.connect(keeper).enforceTimeout(1n))
          .to.be.revertedWithCustomError(registry, "TimeoutNotReached")
          .withArgs(1n, 1, t + 2n * HOUR);
        await networkHelpers.time.increase(2n * HOUR);
        await expect(registry.connect(keeper).enforceTimeout(1n))
          .to.emit(registry, "StageTimedOut")
          .withArgs(1n, 1, OnTimeout.Notify);
      });
    });

    describe("when the stage escalates (ESCALATE)", function () {
      it("escalates the stage to an administrator", async function () {
        const { documents, registry, keeper, departments } = await loadFixture(deployTimeoutEscalationRequest);
        await registry.connect(departments.A).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
        await networkHelpers.time.increase(HOUR);
        const tx = registry.connect(keeper).enforceTimeout(1n);
        await expect(tx).to.emit(registry, "StageTimedOut").withArgs(1n, 0, OnTimeout.Escalate);
        await expect(tx).to.emit(registry, "StageEscalated").withArgs(1n, 0, Cause.Timeout, 0);
        await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Escalated);
        await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
        expect((await registry.progressOf(1n)).phase).to.equal(Phase.Escalated);
        await expect(registry.connect(keeper).enforceTimeout(1n))
          .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
          .withArgs(1n, Phase.Escalated);
        await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
          .withArgs(1n, Phase.Escalated);
      });

      it("resumes with a new clock when the administrator sends it back", async function () {
        const { token, registry, admin, keeper, departments } = await loadFixture(deployTimeoutEscalationRequest);
        await registry.connect(departments.A).approve(1n, 0b1, await latestVersions(registry, 1n), REMARKS);
        await networkHelpers.time.increase(HOUR);
        await registry.connect(keeper).enforceTimeout(1n);
        const tx = registry.connect(admin).resolveEscalation(1n, false, 0);
        const t = await timestampOf(tx);
        await expect(tx).to.emit(registry, "EscalationResolved").withArgs(1n, 0, false, 0);
        await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 0, t);
        expect((await registry.progressOf(1n)).flags).to.equal(0n);
        expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([Decision.Approved, Decision.Pending]);
        await expect(registry.connect(keeper).enforceTimeout(1n))
          .to.be.revertedWithCustomError(registry, "TimeoutNotReached")
          .withArgs(1n, 0, t + HOUR);
        await registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        expect((await token.licence(1n)).status).to.equal(Status.Approved);
      });
    });

    it("rejects the request with REASON_TIMEOUT when the stage rejects automatically (AUTO_REJECT)", async function () {
      const { token, documents, registry, keeper } = await loadFixture(deployAutoRejectRequest);
      await networkHelpers.time.increase(HOUR);
      const tx = registry.connect(keeper).enforceTimeout(1n);
      await expect(tx).to.emit(registry, "StageTimedOut").withArgs(1n, 0, OnTimeout.AutoReject);
      await expect(tx).to.emit(registry, "ReviewPhaseChanged").withArgs(1n, Phase.Closed);
      await expect(tx)
        .to.emit(token, "LicenceStatusChanged")
        .withArgs(1n, Status.Submitted, Status.Rejected, 6, await registry.getAddress());
      await expect(tx).to.emit(documents, "DocumentPhaseChanged").withArgs(1n, DocPhase.Locked);
      const licence = await token.licence(1n);
      expect([licence.status, licence.reasonCode]).to.deep.equal([Status.Rejected, await registry.REASON_TIMEOUT()]);
      expect((await registry.progressOf(1n)).phase).to.equal(Phase.Closed);
      await expect(registry.connect(keeper).enforceTimeout(1n))
        .to.be.revertedWithCustomError(registry, "ReviewWrongPhase")
        .withArgs(1n, Phase.Closed);
    });
  });

  // ============================================================================================ invalidation

  describe("invalidateReviews", function () {
    it("stops there until that department decides again when a re-entered stage still meets its rule but holds an invalidated approval", async function () {
      // Stage 0 [A]; stage 1 PARALLEL THRESHOLD 1 [B, C] with C mandatory; stage 2 [D].
      const { registry, documents, departments, operator } = await loadFixture(
        async function invalidatedButCompleteStage() {
          return deploySubmittedRequestWith([
            stage({ departments: ["A"] }),
            stage({
              executionType: Execution.Parallel,
              completion: Completion.Threshold,
              threshold: 1,
              mandatoryMask: 0b10,
              departments: ["B", "C"],
            }),
            stage({ departments: ["D"] }),
          ]);
        },
      );
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), ethers.ZeroHash);
      await registry.connect(departments.B).approve(1n, 0b001, await latestVersions(registry, 1n), ethers.ZeroHash);
      await registry.connect(departments.C).approve(1n, 0b010, await latestVersions(registry, 1n), ethers.ZeroHash);
      expect((await registry.progressOf(1n)).stage).to.equal(2n);

      // Document 0 was reviewed by A (stage 0) and B (stage 1): review goes back to stage 0.
      await documents.connect(operator).anchorVersion(1n, sha("doc-0-v1"), sha("doc-0-v2"));
      expect((await registry.progressOf(1n)).stage).to.equal(0n);

      // A approves again: stage 1 would still meet THRESHOLD 1 with C, but B must review again first.
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), ethers.ZeroHash);
      const progress = await registry.progressOf(1n);
      expect(progress.stage).to.equal(1n);
      const dIds = await registry.pendingDepartmentsOf(1n);
      const [bId] = await registry.departmentByCode(code("B"));
      expect(dIds).to.deep.equal([bId]);

      await registry.connect(departments.B).approve(1n, 0b001, await latestVersions(registry, 1n), ethers.ZeroHash);
      expect((await registry.progressOf(1n)).stage).to.equal(2n);
    });

    it("reverts with NotDocumentRegistry when the caller is not the document registry", async function () {
      const { registry, stranger, operator, admin, departments } = await loadFixture(deploySubmittedRequest);
      for (const caller of [stranger, operator, admin, departments.A]) {
        await expect(registry.connect(caller).invalidateReviews(1n, 0, 2))
          .to.be.revertedWithCustomError(registry, "NotDocumentRegistry")
          .withArgs(caller.address);
      }
    });

    it("ignores the update when the request is not under review", async function () {
      const { documents, registry, departments } = await loadFixture(deploySubmittedAndDraftRequests);
      for (const name of ["A", "B", "C", "D"] as const)
        await registry.connect(departments[name]).approve(1n, 1, await latestVersions(registry, 1n), REMARKS);
      const address = await documents.getAddress();
      await networkHelpers.impersonateAccount(address);
      await networkHelpers.setBalance(address, ethers.parseEther("1"));
      const documentRegistry = await ethers.getSigner(address);
      for (const tokenId of [1n, 2n]) {
        await expect(registry.connect(documentRegistry).invalidateReviews(tokenId, 0, 2)).not.to.emit(
          registry,
          "ReviewInvalidated",
        );
      }
      expect((await registry.decisionsOf(1n, 1)).statuses).to.deep.equal([Decision.Approved, Decision.Approved]);
    });

    describe("when a document reviewed in the current stage gets a new version", function () {
      it("turns the approvals that reviewed it into ReviewRequired", async function () {
        const platform = await loadFixture(deployThreeStageRequest);
        const { documents, registry, departments } = platform;
        await registry.connect(departments.A).approve(1n, 0b011, await latestVersions(registry, 1n), REMARKS);
        const tx = newVersion(platform, 1);
        await expect(tx)
          .to.emit(documents, "DocumentAnchored")
          .withArgs(1n, uuid(2), sha("doc-1-v2"), 1, 2, ethers.ZeroHash);
        await expect(tx).to.emit(registry, "ReviewInvalidated").withArgs(1n, ID.A, 0, 1, 2);
        await expect(tx).not.to.emit(registry, "StageReopened");
        expect(plain(await registry.decisionsOf(1n, 0))).to.deep.equal([
          [ID.A, ID.B],
          [Decision.ReviewRequired, Decision.Pending],
          [0b011n, 0n],
        ]);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A, ID.B]);

        // The stage is not complete until the department decides again.
        await expect(
          registry.connect(departments.B).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS),
        ).not.to.emit(registry, "StageCompleted");
        const packed = await documents.packedDocumentsOf(1n);
        expect((packed >> 31n) & 0x7fffn).to.equal(2n);
        const again = registry.connect(departments.A).approve(1n, 0b011, await latestVersions(registry, 1n), REMARKS);
        await expect(again)
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b011, packed, departments.A));
        await expect(again).to.emit(registry, "StageCompleted").withArgs(1n, 0);
      });

      it("leaves the approvals that did not review it alone", async function () {
        const platform = await loadFixture(deployThreeStageRequest);
        const { registry, departments } = platform;
        for (const name of ["A", "B", "C"] as const)
          await registry.connect(departments[name]).approve(1n, 0b110, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.D).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.E).approve(1n, 0b010, await latestVersions(registry, 1n), REMARKS);
        const tx = newVersion(platform, 0);
        expect(await eventsOf(tx, registry, "ReviewInvalidated")).to.deep.equal([[1n, ID.D, 2n, 0n, 2n]]);
        await expect(tx).not.to.emit(registry, "StageReopened");
        expect((await registry.decisionsOf(1n, 2)).statuses).to.deep.equal([
          Decision.ReviewRequired,
          Decision.Approved,
          Decision.Pending,
        ]);
        for (const s of [0, 1]) {
          expect((await registry.decisionsOf(1n, s)).statuses.every((x) => x === Decision.Approved)).to.equal(true);
        }
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.D, ID.F]);
        await expect(registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewAlreadyDecided")
          .withArgs(1n, 2, ID.E, Decision.Approved);
      });

      it("gives the turn back to the invalidated department in a SEQUENTIAL stage", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { registry, departments } = platform;
        await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        await newVersion(platform, 0);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
        await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotYourTurn")
          .withArgs(1n, 0, ID.B, 0);
        await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.B]);
      });
    });

    describe("when an approval named no document (an empty review list)", function () {
      it("covers every document of the request", async function () {
        const { documents, registry, departments } = await loadFixture(deploySubmittedRequest);
        const packed = await documents.packedDocumentsOf(1n);
        await expect(registry.connect(departments.A).approve(1n, 0, packed, REMARKS))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b111, packed, departments.A));
        expect((await registry.decisionsOf(1n, 0)).reviewedMasks).to.deep.equal([0b111n, 0n]);
      });

      for (const docIndex of [0, 1, 2]) {
        it(`is invalidated by a new version of document ${docIndex}`, async function () {
          const platform = await loadFixture(deploySubmittedRequest);
          const { documents, registry, departments } = platform;
          await registry.connect(departments.A).approve(1n, 0, await documents.packedDocumentsOf(1n), REMARKS);
          await expect(newVersion(platform, docIndex))
            .to.emit(registry, "ReviewInvalidated")
            .withArgs(1n, ID.A, 0, docIndex, 2);
          expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([
            Decision.ReviewRequired,
            Decision.Pending,
          ]);
        });
      }

      it("names every document's version: an update of any document makes it stale", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, departments } = platform;
        const reviewed = await documents.packedDocumentsOf(1n);
        await newVersion(platform, 2);
        await expect(registry.connect(departments.A).approve(1n, 0, reviewed, REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewStaleDocuments")
          .withArgs(1n, 2, sha("doc-2-v1"));
      });
    });

    describe("when a document is added under review", function () {
      it("invalidates every approval of the current stage, whatever it reviewed", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, operator, departments } = platform;
        await registry.connect(departments.A).approve(1n, 0b001, await documents.packedDocumentsOf(1n), REMARKS);
        const tx = documents.connect(operator).anchorDocument(1n, uuid(4), code("DOC_3"), sha("doc-3-v1"));
        await expect(tx)
          .to.emit(documents, "DocumentAnchored")
          .withArgs(1n, uuid(4), sha("doc-3-v1"), 3, 1, code("DOC_3"));
        await expect(tx).to.emit(registry, "ReviewInvalidated").withArgs(1n, ID.A, 0, 3, 1);
        await expect(tx).not.to.emit(registry, "StageReopened");
        expect(plain(await registry.decisionsOf(1n, 0))).to.deep.equal([
          [ID.A, ID.B],
          [Decision.ReviewRequired, Decision.Pending],
          [0b001n, 0n],
        ]);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);

        // Deciding again with an empty list now covers the new document too.
        const packed = await documents.packedDocumentsOf(1n);
        await expect(registry.connect(departments.A).approve(1n, 0, packed, REMARKS))
          .to.emit(registry, "DecisionRecorded")
          .withArgs(...recorded(ID.A, 0, Decision.Approved, 0, 0b1111, packed, departments.A));
      });

      it("invalidates an empty-list approval (it did not cover the new document)", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, operator, departments } = platform;
        await registry.connect(departments.A).approve(1n, 0, await documents.packedDocumentsOf(1n), REMARKS);
        await expect(documents.connect(operator).anchorDocument(1n, uuid(4), code("DOC_3"), sha("doc-3-v1")))
          .to.emit(registry, "ReviewInvalidated")
          .withArgs(1n, ID.A, 0, 3, 1);
        expect((await registry.decisionsOf(1n, 0)).reviewedMasks).to.deep.equal([0b111n, 0n]);
      });

      it("reopens the approvals of completed stages too, and review goes back to the earliest", async function () {
        // A new document added in stage 2 was never in front of stage 1's departments: their approvals cannot
        // stand over it, whichever anchoring call the operator chose.
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, operator, departments } = platform;
        for (const name of ["A", "B", "C"] as const) {
          await registry.connect(departments[name]).approve(1n, 0, await documents.packedDocumentsOf(1n), REMARKS);
        }
        const tx = documents.connect(operator).anchorDocument(1n, uuid(4), code("DOC_3"), sha("doc-3-v1"));
        expect(await eventsOf(tx, registry, "ReviewInvalidated")).to.deep.equal([
          [1n, ID.A, 0n, 3n, 1n],
          [1n, ID.B, 0n, 3n, 1n],
          [1n, ID.C, 1n, 3n, 1n],
        ]);
        await expect(tx).to.emit(registry, "StageReopened").withArgs(1n, 1, 0);
        expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([
          Decision.ReviewRequired,
          Decision.ReviewRequired,
        ]);
        expect((await registry.decisionsOf(1n, 1)).statuses).to.deep.equal([Decision.ReviewRequired, Decision.Pending]);
        expect((await registry.progressOf(1n)).stage).to.equal(0n);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
      });

      it("invalidates the stage's approvals while the request awaits resubmission", async function () {
        const platform = await loadFixture(deploySubmittedRequest);
        const { documents, registry, operator, departments } = platform;
        await registry.connect(departments.A).approve(1n, 0b001, await documents.packedDocumentsOf(1n), REMARKS);
        await registry.connect(departments.B).requestChanges(1n, 0b010, await documents.packedDocumentsOf(1n), REMARKS);
        await expect(documents.connect(operator).anchorDocument(1n, uuid(4), code("DOC_3"), sha("doc-3-v1")))
          .to.emit(registry, "ReviewInvalidated")
          .withArgs(1n, ID.A, 0, 3, 1);
        await registry.connect(operator).resubmit(1n);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
      });

      it("invalidates nothing for a document added to a Draft", async function () {
        const { documents, registry, operator } = await loadFixture(deploySubmittedAndDraftRequests);
        await expect(
          documents.connect(operator).anchorDocument(2n, uuid(9), code("DOC_0"), sha("draft-doc")),
        ).not.to.emit(registry, "ReviewInvalidated");
      });
    });

    describe("when a document reviewed in a completed stage gets a new version", function () {
      /** Stages 0 and 1 completed (A: doc 0, B: doc 1, C: doc 2); in stage 2, D approved having reviewed doc 2. */
      async function deployInLastStage() {
        const platform = await deployThreeStageRequest();
        const { registry, departments } = platform;
        await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.B).approve(1n, 0b010, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.C).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
        await registry.connect(departments.D).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
        return platform;
      }

      it("reopens the stage and keeps the later stages' approvals", async function () {
        const platform = await loadFixture(deployInLastStage);
        const { registry, departments } = platform;
        const tx = newVersion(platform, 0);
        const t = await timestampOf(tx);
        expect(await eventsOf(tx, registry, "ReviewInvalidated")).to.deep.equal([[1n, ID.A, 0n, 0n, 2n]]);
        await expect(tx).to.emit(registry, "StageReopened").withArgs(1n, 2, 0);
        await expect(tx).to.emit(registry, "StageStarted").withArgs(1n, 0, t);
        expect(plain(await registry.progressOf(1n)).slice(0, 6)).to.deep.equal([1n, 0n, Phase.InReview, 2n, 0n, t]);
        expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([
          Decision.ReviewRequired,
          Decision.Approved,
        ]);
        expect((await registry.decisionsOf(1n, 1)).statuses).to.deep.equal([Decision.Approved]);
        expect(plain(await registry.decisionsOf(1n, 2))).to.deep.equal([
          [ID.D, ID.E, ID.F],
          [Decision.Approved, Decision.Pending, Decision.Pending],
          [0b100n, 0n, 0n],
        ]);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
        await expect(registry.connect(departments.B).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewAlreadyDecided")
          .withArgs(1n, 0, ID.B, Decision.Approved);
        await expect(registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "ReviewNotRequired")
          .withArgs(1n, 0, ID.E);
      });

      it("cascades forward through the stages that are still complete", async function () {
        const platform = await loadFixture(deployInLastStage);
        const { token, registry, departments } = platform;
        await newVersion(platform, 0);
        const tx = registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        const t = await timestampOf(tx);
        // Stage 1 is still complete: it advances at once; stage 2 waits for E and F.
        expect(await eventsOf(tx, registry, "StageCompleted")).to.deep.equal([
          [1n, 0n],
          [1n, 1n],
        ]);
        expect(await eventsOf(tx, registry, "StageStarted")).to.deep.equal([
          [1n, 1n, t],
          [1n, 2n, t],
        ]);
        const progress = await registry.progressOf(1n);
        expect([progress.stage, progress.maxStage, progress.phase]).to.deep.equal([2n, 2n, Phase.InReview]);
        // D's approval in stage 2 was kept.
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.E, ID.F]);
        await registry.connect(departments.E).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        const last = registry.connect(departments.F).approve(1n, 0, await latestVersions(registry, 1n), REMARKS);
        const issuedAt = await timestampOf(last);
        await expect(last)
          .to.emit(token, "LicenceIssued")
          .withArgs(1n, issuedAt, issuedAt + VALIDITY_SECONDS);
      });

      it("reopens the earliest affected stage and stops at a later stage that lost an approval", async function () {
        const platform = await loadFixture(deployInLastStage);
        const { registry, departments } = platform;
        // Doc 2 was reviewed by C (stage 1) and D (stage 2, current).
        const tx = newVersion(platform, 2);
        expect(await eventsOf(tx, registry, "ReviewInvalidated")).to.deep.equal([
          [1n, ID.C, 1n, 2n, 2n],
          [1n, ID.D, 2n, 2n, 2n],
        ]);
        await expect(tx).to.emit(registry, "StageReopened").withArgs(1n, 2, 1);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.C]);
        // Re-approval moves to stage 2, where D must decide again.
        await registry.connect(departments.C).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.D, ID.E, ID.F]);
        expect((await registry.decisionsOf(1n, 2)).statuses).to.deep.equal([
          Decision.ReviewRequired,
          Decision.Pending,
          Decision.Pending,
        ]);

        // Two completed stages affected: review goes back to the earliest; the cascade stops at the other.
        await registry.connect(departments.D).approve(1n, 0b101, await latestVersions(registry, 1n), REMARKS);
        const tx2 = newVersion(platform, 0);
        expect(await eventsOf(tx2, registry, "ReviewInvalidated")).to.deep.equal([
          [1n, ID.A, 0n, 0n, 2n],
          [1n, ID.D, 2n, 0n, 2n],
        ]);
        await expect(tx2).to.emit(registry, "StageReopened").withArgs(1n, 2, 0);
        const again = registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        await expect(again).to.emit(registry, "StageCompleted").withArgs(1n, 0);
        await expect(again).to.emit(registry, "StageCompleted").withArgs(1n, 1);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.D, ID.E, ID.F]);
      });

      it("invalidates decisions kept in a stage ahead without moving the review", async function () {
        const platform = await loadFixture(deployInLastStage);
        const { registry, departments } = platform;
        await newVersion(platform, 0);
        // The review is in stage 0; D's approval (stage 2, ahead) reviewed doc 2.
        const tx = newVersion(platform, 2);
        expect(await eventsOf(tx, registry, "ReviewInvalidated")).to.deep.equal([
          [1n, ID.C, 1n, 2n, 2n],
          [1n, ID.D, 2n, 2n, 2n],
        ]);
        await expect(tx).not.to.emit(registry, "StageReopened");
        expect((await registry.progressOf(1n)).stage).to.equal(0n);
        await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
        expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.C]);
      });
    });

    it("reopens the earlier stage and supersedes the request for changes when the request is awaiting resubmission", async function () {
      const platform = await loadFixture(deploySubmittedRequest);
      const { token, registry, operator, departments } = platform;
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.B).approve(1n, 0b010, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.D).approve(1n, 0b100, await latestVersions(registry, 1n), REMARKS);
      await registry.connect(departments.C).requestChanges(1n, 0b001, await latestVersions(registry, 1n), REMARKS);

      const tx = newVersion(platform, 0);
      expect(await eventsOf(tx, registry, "ReviewInvalidated")).to.deep.equal([[1n, ID.A, 0n, 0n, 2n]]);
      await expect(tx).to.emit(registry, "StageReopened").withArgs(1n, 1, 0);
      // The stage left drops C's (position 0) request for changes; D's approval stands.
      await expect(tx).to.emit(registry, "DecisionsReset").withArgs(1n, 1, 0b01, Reset.StageReopened);
      await expect(tx)
        .to.emit(registry, "StageStarted")
        .withArgs(1n, 0, await timestampOf(tx));
      await expect(tx).not.to.emit(registry, "ReviewPhaseChanged");
      const progress = await registry.progressOf(1n);
      expect([progress.stage, progress.phase]).to.deep.equal([0n, Phase.AwaitingResubmission]);
      expect((await token.licence(1n)).status).to.equal(Status.PendingResubmission);
      expect((await registry.decisionsOf(1n, 1)).statuses).to.deep.equal([Decision.Pending, Decision.Approved]);

      const resubmitted = registry.connect(operator).resubmit(1n);
      await expect(resubmitted).to.emit(registry, "Resubmitted").withArgs(1n, 0);
      await expect(resubmitted).not.to.emit(registry, "DecisionsReset");
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.A]);
      await registry.connect(departments.A).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
      expect(await registry.pendingDepartmentsOf(1n)).to.deep.equal([ID.C]);
      await registry.connect(departments.C).approve(1n, 0b001, await latestVersions(registry, 1n), REMARKS);
      expect((await token.licence(1n)).status).to.equal(Status.Approved);
    });
  });

  // ============================================================================================ trust

  describe("trust property", function () {
    it("no operator, admin, keeper or default admin can decide for a department", async function () {
      const { token, registry, deployer, admin, operator, keeper } = await loadFixture(deploySubmittedRequest);
      for (const caller of [operator, admin, keeper, deployer]) {
        await expect(registry.connect(caller).approve(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "NotADepartment")
          .withArgs(caller.address);
        await expect(registry.connect(caller).reject(1n, 1, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "NotADepartment")
          .withArgs(caller.address);
        await expect(registry.connect(caller).requestChanges(1n, 0, await latestVersions(registry, 1n), REMARKS))
          .to.be.revertedWithCustomError(registry, "NotADepartment")
          .withArgs(caller.address);
        await expect(token.connect(caller).issue(1n, 0))
          .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
          .withArgs(caller.address);
        await expect(token.connect(caller).transition(1n, Status.Rejected, 1))
          .to.be.revertedWithCustomError(token, "LicenceUnauthorizedRegistry")
          .withArgs(caller.address);
      }
      expect((await token.licence(1n)).status).to.equal(Status.Submitted);
      expect((await registry.decisionsOf(1n, 0)).statuses).to.deep.equal([Decision.Pending, Decision.Pending]);
    });
  });
});
