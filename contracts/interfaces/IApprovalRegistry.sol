// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC5267} from "@openzeppelin/contracts/interfaces/IERC5267.sol";

/// @title Approval registry: departments, versioned workflows and every department's decision on every request.
/// @notice A request follows the workflow version pinned at its creation. Only the wallet of a department
/// required in the current stage can decide (in listed order for SEQUENTIAL stages). When the stage's completion
/// rule is met the request advances; after the last stage the licence is issued in the same transaction.
interface IApprovalRegistry is IERC5267 {
    enum ExecutionType {
        Sequential,
        Parallel
    }

    enum Completion {
        All, // every department of the stage approves
        Any, // one approval suffices (plus every mandatory department)
        Threshold // at least `threshold` approvals (plus every mandatory department)
    }

    enum TimeoutAction {
        None,
        Notify, // event for the API to notify the pending departments
        Escalate, // the stage is escalated to an administrator
        AutoReject // the request is rejected
    }

    enum RejectionAction {
        FailRequest, // the request is rejected for good
        RetryStage, // the stage starts over after the applicant resubmits
        Escalate // an administrator upholds the rejection or sends it back to the department
    }

    /// @notice Where a request stands in its review.
    enum Phase {
        NotStarted, // Draft (or cancelled before submission)
        InReview, // departments of the current stage can decide
        AwaitingResubmission, // changes requested (or stage to retry): waiting for the applicant
        Escalated, // waiting for an administrator
        Closed // approved, rejected or cancelled
    }

    /// @notice State of one department's decision in one stage of one request.
    enum DecisionStatus {
        Pending,
        Approved,
        Rejected,
        ChangesRequested,
        ReviewRequired // it approved, then a document it reviewed got a new version: it must decide again
    }

    enum EscalationCause {
        Rejection,
        Timeout
    }

    /// @notice Why decisions of a stage went back to Pending (DecisionsReset).
    enum ResetCause {
        Resubmitted, // the applicant resubmitted: requests for changes are decided again
        EscalationReturned, // an administrator sent an escalated rejection back: the rejection is decided again
        StageRetried, // a rejection with RetryStage cleared every decision of the stage
        StageReopened // a document update sent review back to an earlier stage: the stage left drops its requests for changes
    }

    /// @notice Who holds a department's key.
    enum Custody {
        Custodial, // the platform holds the key (a vault or a remote signer) and signs as the department asks
        DepartmentHeld // the department holds its key (an EOA or an EIP-1271 wallet such as a Safe) and signs itself
    }

    /// @notice A department's decision, exactly as the department saw it (EIP-712 typed data when relayed).
    /// Type: Decision(uint256 tokenId,uint16 departmentId,uint8 stage,uint40 round,uint8 decision,uint8 reasonCode,
    /// uint16 reviewedMask,bytes32[] documents,bytes32 remarksHash,uint64 nonce,uint64 deadline)
    /// @dev Binding the stage, the round and the documents' hashes means a held-back signature cannot land in another
    /// stage, after a restart of the stage, or over other files; the nonce is consumed by every decision, so a
    /// department's later decision (or `increaseDecisionNonce`) voids every signature it gave before.
    struct Decision {
        uint256 tokenId;
        uint16 departmentId;
        uint8 stage; // the stage decided in
        uint40 round; // the stage's start time (progressOf.stageStartedAt): every restart of the stage is a new round
        DecisionStatus decision; // Approved, Rejected or ChangesRequested
        uint8 reasonCode; // rejections: 1..5; otherwise 0
        uint16 reviewedMask; // bit i = document index i; 0 = every document of the request
        bytes32[] documents; // SHA-256 of each reviewed document's latest version, by ascending document index
        bytes32 remarksHash; // keccak256 of the off-chain remarks
        uint64 nonce; // the department's next decision nonce
        uint64 deadline; // last block time at which the decision is accepted (at most MAX_DECISION_LIFETIME ahead)
    }

    /// @notice A department as stored, with its pending wallet change.
    struct DepartmentRecord {
        bytes32 code;
        address wallet; // the address whose signature (or transaction) is the department's decision
        Custody custody;
        bool active;
        uint64 nonce; // next nonce of a signed decision
        address pendingWallet; // proposed wallet (zero: none)
        Custody pendingCustody;
        uint40 pendingEffectiveAt; // block time from which the proposed wallet can be activated
        bool pendingConsented; // the current wallet consented to the change
    }

    /// @notice One stage of a workflow, as registered.
    struct StageInput {
        ExecutionType executionType;
        Completion completion;
        uint8 threshold; // THRESHOLD only: 1..departments.length; otherwise 0
        TimeoutAction onTimeout; // None exactly when timeoutSeconds is 0
        RejectionAction onRejection;
        uint32 timeoutSeconds;
        uint8 mandatoryMask; // bit i: departments[i] is mandatory (ALL: every department is)
        bytes32[] departments; // department codes, 1..8, distinct
    }

    /// @notice One stage of a workflow, as stored (one slot).
    struct Stage {
        ExecutionType executionType;
        Completion completion;
        uint8 threshold;
        TimeoutAction onTimeout;
        RejectionAction onRejection;
        uint8 departmentCount;
        uint8 mandatoryMask;
        uint32 timeoutSeconds;
        uint128 departmentIds; // 16 bits per position
    }

    struct Workflow {
        bytes32 workflowType; // the request type, e.g. "BUILDING_PERMIT"
        bytes32 definitionHash; // keccak256 of the full JSON definition kept off chain
        uint64 validitySeconds; // lifetime of an issued licence (0: no expiry)
        uint16 version; // 1, 2, ... per workflow type
        uint8 stageCount;
        bool active;
    }

    /// @notice Review progress of one request (one slot). `ledger` holds the current stage's decisions:
    /// 19 bits per position = 3-bit DecisionStatus | 16-bit mask of the documents it reviewed.
    struct Progress {
        uint32 workflowId;
        uint8 stage;
        Phase phase;
        uint8 maxStage; // furthest stage reached: later stages may hold decisions kept across a reopening
        uint8 flags; // bit 0: the current stage's timeout was acted on
        uint40 stageStartedAt;
        uint152 ledger;
    }

    /// @notice Department `code` was registered as `departmentId`; it decides from `wallet`.
    /// @param departmentId The new department's id (1, 2, ...).
    /// @param code The department code, e.g. "FIRE".
    /// @param wallet The wallet that signs the department's decisions.
    /// @param custody Who holds the wallet's key.
    event DepartmentRegistered(uint16 indexed departmentId, bytes32 indexed code, address indexed wallet, Custody custody);
    /// @notice Department `departmentId` was activated or deactivated: an inactive department cannot decide.
    /// @param departmentId The department.
    /// @param active Whether the department can decide.
    event DepartmentActiveSet(uint16 indexed departmentId, bool active);
    /// @notice An administrator proposed a new wallet (or custody) for department `departmentId`. It can be
    /// activated from `effectiveAt` on, and cancelled by the department's current wallet until then.
    /// @param departmentId The department.
    /// @param wallet The proposed wallet.
    /// @param custody Who holds the proposed wallet's key.
    /// @param effectiveAt Block time from which the change can be activated (proposal time + the wallet delay).
    event DepartmentWalletProposed(uint16 indexed departmentId, address indexed wallet, Custody custody, uint40 effectiveAt);
    /// @notice The current wallet of department `departmentId` consented to its pending wallet change: a
    /// department-held department's consented change can be activated at once.
    /// @param departmentId The department.
    /// @param wallet The proposed wallet consented to.
    event DepartmentWalletConsented(uint16 indexed departmentId, address indexed wallet);
    /// @notice Department `departmentId` moved its decision nonce from `previousNonce` to `nonce`: every decision
    /// it signed with a nonce below `nonce` can no longer be recorded.
    /// @param departmentId The department.
    /// @param previousNonce The nonce before.
    /// @param nonce The department's next decision nonce.
    event DecisionNonceIncreased(uint16 indexed departmentId, uint64 previousNonce, uint64 nonce);
    /// @notice The pending wallet change of department `departmentId` was cancelled.
    /// @param departmentId The department.
    /// @param wallet The wallet that was proposed.
    /// @param by Who cancelled: the department's current wallet or an administrator.
    event DepartmentWalletCancelled(uint16 indexed departmentId, address indexed wallet, address by);
    /// @notice Department `departmentId` now decides from `wallet`; `previousWallet` can no longer decide.
    /// @param departmentId The department.
    /// @param previousWallet The wallet replaced.
    /// @param wallet The department's new wallet.
    /// @param custody Who holds the new wallet's key.
    event DepartmentWalletRotated(
        uint16 indexed departmentId, address indexed previousWallet, address indexed wallet, Custody custody
    );

    /// @notice Version `version` of the workflow of `workflowType` was registered as `workflowId` and made the
    /// active one. Its stages were emitted just before, one WorkflowStageRegistered each.
    /// @param workflowId The new workflow version's id (1, 2, ... across all types).
    /// @param workflowType The request type, e.g. "BUILDING_PERMIT".
    /// @param version The version number within `workflowType` (1, 2, ...).
    /// @param definitionHash keccak256 of the full JSON definition kept off chain.
    /// @param stageCount The number of stages (1..16).
    /// @param validitySeconds The lifetime of a licence issued under this version (0: no expiry).
    event WorkflowRegistered(
        uint32 indexed workflowId,
        bytes32 indexed workflowType,
        uint16 version,
        bytes32 definitionHash,
        uint8 stageCount,
        uint64 validitySeconds
    );
    /// @notice Stage `stageIndex` of workflow `workflowId`, as stored.
    /// @param workflowId The workflow version.
    /// @param stageIndex The stage's position in the workflow (0-based).
    /// @param stage The stored stage: department ids packed 16 bits per position, mandatory mask resolved.
    event WorkflowStageRegistered(uint32 indexed workflowId, uint8 indexed stageIndex, Stage stage);
    /// @notice Workflow `workflowId` accepts no new requests any more (deactivated, or replaced by a new version).
    /// Requests already pinned to it keep following it.
    /// @param workflowId The workflow version.
    /// @param workflowType Its request type.
    event WorkflowDeactivated(uint32 indexed workflowId, bytes32 indexed workflowType);

    /// @notice The applicant submitted the request: review starts at stage 0 of `workflowId`.
    /// @param tokenId The licence request.
    /// @param workflowId The workflow version the request is pinned to.
    event ReviewStarted(uint256 indexed tokenId, uint32 indexed workflowId);
    /// @notice The applicant resubmitted after a request for changes (or a stage to retry).
    /// @param tokenId The licence request.
    /// @param stage The stage whose review continues.
    event Resubmitted(uint256 indexed tokenId, uint8 indexed stage);
    /// @notice The review of `tokenId` moved to `phase` (emitted on every change of Progress.phase).
    /// @param tokenId The licence request.
    /// @param phase The new phase.
    event ReviewPhaseChanged(uint256 indexed tokenId, Phase phase);
    /// @notice Decisions of stage `stage` went back to Pending: those of the positions in `positionsMask` no longer
    /// stand, and the departments there decide again (when the stage is current).
    /// @param tokenId The licence request.
    /// @param stage The stage whose decisions were cleared.
    /// @param positionsMask Bit p set when the department at position p of the stage lost its decision.
    /// @param cause Why: resubmission, an escalation sent back, a stage retry or a reopening.
    event DecisionsReset(uint256 indexed tokenId, uint8 indexed stage, uint8 positionsMask, ResetCause cause);
    /// @notice Stage `stage` became current (or its clock restarted) at `startedAt`.
    /// @param tokenId The licence request.
    /// @param stage The stage.
    /// @param startedAt Block time its timeout counts from.
    event StageStarted(uint256 indexed tokenId, uint8 indexed stage, uint40 startedAt);
    /// @notice Stage `stage` met its completion rule.
    /// @param tokenId The licence request.
    /// @param stage The stage completed.
    event StageCompleted(uint256 indexed tokenId, uint8 indexed stage);
    /// @notice A document update invalidated an approval of the completed stage `toStage`: review goes back there.
    /// @param tokenId The licence request.
    /// @param fromStage The stage the review was in; it keeps its approvals.
    /// @param toStage The earliest completed stage that lost an approval: the new current stage.
    event StageReopened(uint256 indexed tokenId, uint8 fromStage, uint8 toStage);
    /// @notice A rejection with RetryStage cleared the stage's decisions; it restarts after resubmission.
    /// @param tokenId The licence request.
    /// @param stage The stage to retry.
    event StageRetried(uint256 indexed tokenId, uint8 indexed stage);
    /// @notice Stage `stage` was escalated to an administrator, after a rejection (RejectionAction.Escalate) or a
    /// timeout (TimeoutAction.Escalate). Documents are frozen until the escalation is resolved.
    /// @param tokenId The licence request.
    /// @param stage The stage escalated.
    /// @param cause Rejection or Timeout.
    /// @param departmentId The rejecting department (0 for a timeout).
    event StageEscalated(uint256 indexed tokenId, uint8 indexed stage, EscalationCause cause, uint16 departmentId);
    /// @notice An administrator resolved the escalation of stage `stage`.
    /// @param tokenId The licence request.
    /// @param stage The stage escalated.
    /// @param rejected True: the request is rejected. False: the review resumes in the same stage, the rejecting
    /// department (if any) must decide again and the stage's clock restarts.
    /// @param reasonCode The reason of the rejection (0 when not rejected).
    event EscalationResolved(uint256 indexed tokenId, uint8 indexed stage, bool rejected, uint8 reasonCode);
    /// @notice The keeper acted on stage `stage`, overdue: its `onTimeout` applies.
    /// @param tokenId The licence request.
    /// @param stage The overdue stage.
    /// @param action Notify (the API notifies the pending departments), Escalate or AutoReject.
    event StageTimedOut(uint256 indexed tokenId, uint8 indexed stage, TimeoutAction action);

    /// @notice Department `departmentId` decided. `reviewedMask` bit i = document index i (every document when the
    /// department named none); `documentVersions` is the document registry's packed word at that moment (15 bits
    /// per index from bit 16: latest version), and the department named exactly these versions for the reviewed
    /// documents (a decision naming older versions reverts), so the versions reviewed are on chain.
    /// `remarksHash` is keccak256 of the off-chain remarks.
    /// @param tokenId The licence request.
    /// @param departmentId The department that decided.
    /// @param stage The stage it decided in.
    /// @param decision Approved, Rejected or ChangesRequested.
    /// @param reasonCode The reason of a rejection (1..5); 0 otherwise.
    /// @param reviewedMask The documents reviewed: bit i = document index i.
    /// @param documentVersions The document registry's packed word when the decision was made.
    /// @param remarksHash keccak256 of the off-chain remarks.
    /// @param signer The department wallet that decided: the transaction's sender, or the EIP-712 signer (an EOA
    /// or an EIP-1271 wallet) of a relayed decision.
    /// @param custody Who held the signer's key, as registered.
    event DecisionRecorded(
        uint256 indexed tokenId,
        uint16 indexed departmentId,
        uint8 indexed stage,
        DecisionStatus decision,
        uint8 reasonCode,
        uint16 reviewedMask,
        uint256 documentVersions,
        bytes32 remarksHash,
        address signer,
        Custody custody
    );
    /// @notice A new version of document `docIndex` (or a new document, `newVersion` 1, added under review)
    /// invalidated this department's approval in `stage`.
    /// @param tokenId The licence request.
    /// @param departmentId The department whose approval now reads ReviewRequired.
    /// @param stage The stage of that approval.
    /// @param docIndex The document updated.
    /// @param newVersion Its new version.
    event ReviewInvalidated(
        uint256 indexed tokenId, uint16 indexed departmentId, uint8 indexed stage, uint8 docIndex, uint16 newVersion
    );

    /// @dev A department code must not be zero.
    error DepartmentInvalidCode();

    /// @dev A department wallet must not be the zero address.
    /// @param wallet The wallet offered.
    error DepartmentInvalidWallet(address wallet);

    /// @dev A department already has this code.
    /// @param code The department code offered.
    error DepartmentAlreadyRegistered(bytes32 code);

    /// @dev The wallet already decides for a department.
    /// @param wallet The wallet offered.
    error DepartmentWalletInUse(address wallet);

    /// @dev No department has this code.
    /// @param code The department code looked up.
    error DepartmentUnknown(bytes32 code);

    /// @dev No department has this id.
    /// @param departmentId The department id looked up.
    error DepartmentUnknownId(uint16 departmentId);

    /// @dev The department is deactivated: it cannot decide or be named in a new workflow.
    /// @param departmentId The department.
    error DepartmentInactive(uint16 departmentId);

    /// @dev 65,535 departments at most.
    error DepartmentLimitReached();

    /// @dev A department wallet holds no role, and a role holder is never a department wallet: an administrator
    /// or the operator cannot decide for a department.
    /// @param wallet The wallet that is both, or would be.
    error DepartmentWalletHoldsRole(address wallet);

    /// @dev The department has no pending wallet change.
    /// @param departmentId The department.
    error DepartmentNoWalletChange(uint16 departmentId);

    /// @dev The pending wallet change can be activated only from `effectiveAt`.
    /// @param departmentId The department.
    /// @param effectiveAt The earliest block time of the activation.
    error DepartmentWalletChangeNotDue(uint16 departmentId, uint40 effectiveAt);

    /// @dev Only the department's current wallet (or an administrator) cancels its pending wallet change.
    /// @param departmentId The department.
    /// @param caller The address that tried.
    error DepartmentUnauthorizedCancel(uint16 departmentId, address caller);

    /// @dev The caller's wallet belongs to no department.
    /// @param caller The address that tried to decide.
    error NotADepartment(address caller);

    /// @dev The wallet-change delay is at least one second, so no change takes effect in the block proposing it.
    /// @param delay The delay offered.
    error InvalidWalletDelay(uint40 delay);

    /// @dev No workflow has this id (ids are 1 .. the number of workflows defined).
    /// @param workflowId The workflow id looked up.
    error WorkflowUnknown(uint32 workflowId);

    /// @dev The workflow is already deactivated.
    /// @param workflowId The workflow.
    error WorkflowInactive(uint32 workflowId);

    /// @dev A workflow type must not be zero.
    error WorkflowInvalidType();

    /// @dev A workflow has 1 .. MAX_STAGES stages.
    /// @param count The number of stages offered.
    error WorkflowInvalidStageCount(uint256 count);

    /// @dev The workflow has no stage `stageIndex`.
    /// @param workflowId The workflow.
    /// @param stageIndex The stage index looked up (the workflow's stages are 0 .. its stage count - 1).
    error WorkflowUnknownStage(uint32 workflowId, uint8 stageIndex);

    /// @dev A stage names 1 .. MAX_STAGE_DEPARTMENTS departments.
    /// @param stageIndex The stage, in the order given.
    /// @param count The number of departments offered.
    error WorkflowInvalidStageDepartments(uint256 stageIndex, uint256 count);

    /// @dev A stage names each department once.
    /// @param stageIndex The stage, in the order given.
    /// @param code The department named twice.
    error WorkflowDuplicateDepartment(uint256 stageIndex, bytes32 code);

    /// @dev A THRESHOLD stage needs 1 .. its department count approvals; other stages take a threshold of 0.
    /// @param stageIndex The stage, in the order given.
    /// @param threshold The threshold offered.
    error WorkflowInvalidThreshold(uint256 stageIndex, uint8 threshold);

    /// @dev The mandatory mask names only positions of the stage's departments.
    /// @param stageIndex The stage, in the order given.
    /// @param mandatoryMask The mask offered.
    error WorkflowInvalidMandatoryMask(uint256 stageIndex, uint8 mandatoryMask);

    /// @dev A stage has a timeout and a timeout action together, or neither.
    /// @param stageIndex The stage, in the order given.
    error WorkflowInvalidTimeout(uint256 stageIndex);

    /// @dev A licence lifetime above 2^32-1 seconds (136 years) could overflow the 40-bit expiry.
    /// @param validitySeconds The lifetime offered.
    error WorkflowInvalidValidity(uint64 validitySeconds);

    /// @dev The request is not in the phase this call needs.
    /// @param tokenId The licence request.
    /// @param phase Its current phase.
    error ReviewWrongPhase(uint256 tokenId, Phase phase);

    /// @dev The caller's department is not required in the request's current stage.
    /// @param tokenId The licence request.
    /// @param stage The current stage.
    /// @param departmentId The caller's department.
    error ReviewNotRequired(uint256 tokenId, uint8 stage, uint16 departmentId);

    /// @dev SEQUENTIAL stage: the department at `waitingPosition` must decide first.
    /// @param tokenId The licence request.
    /// @param stage The current stage.
    /// @param departmentId The caller's department.
    /// @param waitingPosition The position, in the stage, of the department whose turn it is.
    error ReviewNotYourTurn(uint256 tokenId, uint8 stage, uint16 departmentId, uint8 waitingPosition);

    /// @dev The department already decided in this stage (and no document update reopened its review).
    /// @param tokenId The licence request.
    /// @param stage The current stage.
    /// @param departmentId The caller's department.
    /// @param status Its decision.
    error ReviewAlreadyDecided(uint256 tokenId, uint8 stage, uint16 departmentId, DecisionStatus status);

    /// @dev `reviewedMask` names documents the request does not have.
    /// @param tokenId The licence request.
    /// @param reviewedMask The documents the decision says it reviewed (bit i: document i).
    /// @param documentCount The number of documents the request has.
    error ReviewUnknownDocuments(uint256 tokenId, uint16 reviewedMask, uint8 documentCount);

    /// @dev Department rejections carry reason codes 1..5 (SAFETY_VIOLATION .. OTHER), other decisions 0; an
    /// administrator's rejection of an escalation carries a non-zero code.
    /// @param reasonCode The reason code offered.
    error ReviewInvalidReason(uint8 reasonCode);

    /// @dev A decision is Approved, Rejected or ChangesRequested.
    /// @param decision The decision offered.
    error ReviewInvalidDecision(DecisionStatus decision);

    /// @dev The signed decision's deadline has passed.
    /// @param deadline The signed deadline (block time).
    error ReviewSignatureExpired(uint64 deadline);

    /// @dev The signed decision's nonce is not the department's next one (replayed or out of order).
    /// @param departmentId The signing department.
    /// @param expected The department's next nonce.
    /// @param nonce The nonce signed.
    error ReviewInvalidNonce(uint16 departmentId, uint64 expected, uint64 nonce);

    /// @dev The signature is not the department wallet's (ECDSA for an EOA, EIP-1271 for a contract wallet).
    /// @param departmentId The department named in the decision.
    /// @param wallet Its current wallet.
    error ReviewInvalidSignature(uint16 departmentId, address wallet);

    /// @dev The current stage has no timeout.
    /// @param tokenId The licence request.
    /// @param stage The current stage.
    error TimeoutNotSet(uint256 tokenId, uint8 stage);

    /// @dev The current stage's timeout falls at `deadline`, still in the future.
    /// @param tokenId The licence request.
    /// @param stage The current stage.
    /// @param deadline The block time from which the timeout can be handled.
    error TimeoutNotReached(uint256 tokenId, uint8 stage, uint40 deadline);

    /// @dev The current stage's timeout was already handled (a stage times out once).
    /// @param tokenId The licence request.
    /// @param stage The current stage.
    error TimeoutAlreadyHandled(uint256 tokenId, uint8 stage);

    /// @dev A decision names another stage or round than the request's current one.
    /// @param tokenId The licence request.
    /// @param stage The stage the decision names.
    /// @param round The round the decision names.
    /// @param currentStage The request's current stage.
    /// @param currentRound The current stage's round (its start time).
    error ReviewWrongRound(uint256 tokenId, uint8 stage, uint40 round, uint8 currentStage, uint40 currentRound);

    /// @dev The decision names a document hash that is not the latest anchored version of the document at that
    /// position of the request (or names more or fewer documents than its mask).
    /// @param tokenId The licence request.
    /// @param docIndex The document's index (the first that does not match).
    /// @param reviewed The hash the decision names for it (zero when it names none).
    error ReviewStaleDocuments(uint256 tokenId, uint8 docIndex, bytes32 reviewed);

    /// @dev A decision's deadline is further ahead than MAX_DECISION_LIFETIME.
    /// @param deadline The decision's deadline.
    /// @param latest The furthest deadline accepted now.
    error ReviewDeadlineTooFar(uint64 deadline, uint256 latest);

    /// @dev A department's decision nonce only moves forward, and by less than 2^32 at a time.
    /// @param departmentId The department.
    /// @param current Its current nonce.
    /// @param requested The nonce asked for.
    error ReviewInvalidNonceIncrease(uint16 departmentId, uint64 current, uint64 requested);

    /// @dev A department wallet must prove that it holds its key: `proof` is not its signature of the DepartmentKey
    /// typed data.
    /// @param code The department code.
    /// @param wallet The wallet.
    error DepartmentInvalidKeyProof(bytes32 code, address wallet);

    /// @dev Only a department's current wallet consents to its wallet change.
    /// @param departmentId The department.
    /// @param caller The address that tried.
    error DepartmentUnauthorizedConsent(uint16 departmentId, address caller);

    /// @dev Only the document registry wired at deployment reports document updates.
    /// @param caller The address that tried.
    error NotDocumentRegistry(address caller);

    // ------------------------------------------------------------------ who decides (governance: DEFAULT_ADMIN_ROLE)

    /// @notice Registers a department with its wallet. Ids start at 1. Governance only: the API's administration
    /// key cannot create a department that decides.
    /// @param code The department code, e.g. "FIRE" (not zero, not registered yet).
    /// @param wallet The wallet that will sign the department's decisions (not zero, not another department's,
    /// holding no role on any of the three contracts).
    /// @param custody Who holds the wallet's key.
    /// @param keyProof `wallet`'s signature of DepartmentKey(bytes32 code,address wallet,uint8 custody) in this
    /// registry's EIP-712 domain (ECDSA, or EIP-1271 for a contract wallet): the key exists and signs.
    /// @return departmentId The new department's id.
    function registerDepartment(bytes32 code, address wallet, Custody custody, bytes calldata keyProof)
        external
        returns (uint16 departmentId);

    /// @notice Proposes a new wallet or custody for a department (replacing any pending proposal). Governance only.
    /// It takes effect only through `activateDepartmentWallet`: at least `walletDelay()` later, or at once when the
    /// current wallet of a department-held department consented; until then the current wallet decides and can
    /// cancel it.
    /// @param code The department code.
    /// @param wallet The new wallet (not zero, holding no role, not another department's; the current wallet to
    /// change only the custody).
    /// @param custody Who will hold the wallet's key.
    /// @param keyProof `wallet`'s signature of DepartmentKey(code, wallet, custody), as for `registerDepartment`.
    function proposeDepartmentWallet(bytes32 code, address wallet, Custody custody, bytes calldata keyProof) external;

    /// @notice The department's current wallet consents to its pending wallet change.
    /// @param code The department code.
    function consentDepartmentWallet(bytes32 code) external;

    /// @notice Cancels a department's pending wallet change. Only the department's current wallet or ADMIN_ROLE.
    /// @param code The department code.
    function cancelDepartmentWallet(bytes32 code) external;

    /// @notice Activates a department's pending wallet change once its delay has passed (or at once when a
    /// department-held department's wallet consented). Anyone can call it.
    /// @param code The department code.
    function activateDepartmentWallet(bytes32 code) external;

    /// @notice Registers the next version of the workflow of `workflowType` and makes it the active one
    /// (new requests of that type are pinned to it; requests already created keep theirs). Governance only.
    /// @param workflowType The request type, e.g. "BUILDING_PERMIT" (not zero).
    /// @param definitionHash keccak256 of the full JSON definition kept off chain.
    /// @param validitySeconds The lifetime of a licence issued under this version (0: no expiry; at most 2^32-1).
    /// @param stages The stages in order (1..16), each with 1..8 distinct registered, active departments.
    /// @return workflowId The new workflow version's id.
    function registerWorkflow(
        bytes32 workflowType,
        bytes32 definitionHash,
        uint64 validitySeconds,
        StageInput[] calldata stages
    ) external returns (uint32 workflowId);

    // ------------------------------------------------------------------ administration (ADMIN_ROLE)

    /// @notice Activates or deactivates a department: an inactive department cannot decide.
    /// @param code The department code.
    /// @param active Whether the department can decide.
    function setDepartmentActive(bytes32 code, bool active) external;

    /// @notice Deactivates a workflow version: no new request can be pinned to it.
    /// @param workflowId The workflow version (active).
    function deactivateWorkflow(uint32 workflowId) external;

    /// @notice Resolves an escalated stage: `reject` rejects the request (with `reasonCode`); otherwise the
    /// rejecting department (if any) must decide again and the stage's clock restarts.
    /// @param tokenId The licence request (Escalated).
    /// @param reject Whether to reject the request.
    /// @param reasonCode The reason of the rejection (not zero when `reject`; ignored otherwise).
    function resolveEscalation(uint256 tokenId, bool reject, uint8 reasonCode) external;

    // ------------------------------------------------------------------ applicant actions (OPERATOR_ROLE)

    /// @notice Draft -> Submitted: review starts at the first stage of the pinned workflow. Only once per request
    /// (a request sent back for changes continues with `resubmit`).
    /// @param tokenId The licence request (a Draft).
    function submit(uint256 tokenId) external;

    /// @notice PendingResubmission -> Submitted: review continues in the same stage.
    /// @param tokenId The licence request (PendingResubmission).
    function resubmit(uint256 tokenId) external;

    /// @notice Draft or PendingResubmission -> Cancelled.
    /// @param tokenId The licence request.
    /// @param reasonCode The reason of the cancellation, recorded on the token.
    function cancel(uint256 tokenId, uint8 reasonCode) external;

    // ------------------------------------------------------------------ department decisions (department wallets)

    /// @notice Records the decision of the department whose wallet sends it. `decision.nonce` must be the
    /// department's next nonce (consumed), `decision.stage` and `decision.round` the current ones, and
    /// `decision.documents` the latest hashes of the documents reviewed; the stage's rules then apply.
    /// @param decision The decision (its departmentId must be the sender's).
    function decide(Decision calldata decision) external;

    /// @notice Records a decision the department signed (EIP-712, this registry's domain: see `eip712Domain()`),
    /// relayed by anyone: the same checks and effects as `decide` sent from the department's wallet.
    /// @param decision The signed decision.
    /// @param signature The department wallet's signature: 65-byte ECDSA for an EOA, anything its
    /// `isValidSignature` accepts for an EIP-1271 wallet.
    function decideBySig(Decision calldata decision, bytes calldata signature) external;

    /// @notice The sending department wallet moves its decision nonce forward, voiding every decision it signed
    /// with a lower nonce that was not recorded yet.
    /// @param nonce The new next nonce (above the current one, by less than 2^32).
    function increaseDecisionNonce(uint64 nonce) external;

    // ------------------------------------------------------------------ keeper and document registry

    /// @notice Acts on an overdue stage (block time past its timeout): NOTIFY, ESCALATE or AUTO_REJECT.
    /// @param tokenId The licence request (under review, its current stage overdue and not yet acted on).
    function enforceTimeout(uint256 tokenId) external;

    /// @notice Called by the document registry when document `docIndex` of `tokenId` gets version `newVersion`.
    /// @param tokenId The licence request.
    /// @param docIndex The document updated.
    /// @param newVersion Its new version.
    function invalidateReviews(uint256 tokenId, uint8 docIndex, uint16 newVersion) external;

    // ------------------------------------------------------------------ reads

    /// @notice A department by code; reverts when unknown.
    /// @param code The department code.
    /// @return departmentId The department's id.
    /// @return wallet The wallet that signs its decisions.
    /// @return active Whether it can decide.
    function departmentByCode(bytes32 code) external view returns (uint16 departmentId, address wallet, bool active);

    /// @notice A department with its custody, decision nonce and pending wallet change; reverts when unknown.
    /// @param departmentId The department's id.
    /// @return The department's record.
    function departmentRecord(uint16 departmentId) external view returns (DepartmentRecord memory);

    /// @notice The delay between proposing a department wallet change and the earliest time it can take effect.
    /// @return Seconds (fixed at deployment).
    function walletDelay() external view returns (uint40);

    /// @notice Whether `account` is a department's current wallet: such an account holds no role anywhere.
    /// @param account The address.
    /// @return True when it is a department's wallet.
    function isDepartmentWallet(address account) external view returns (bool);


    /// @notice A workflow version; reverts when unknown.
    /// @param workflowId The workflow version.
    /// @return The workflow version's record.
    function workflow(uint32 workflowId) external view returns (Workflow memory);

    /// @notice One stage of a workflow version, as stored; reverts when either is unknown.
    /// @param workflowId The workflow version.
    /// @param stageIndex The stage's position in the workflow (0-based).
    /// @return The stage.
    function stage(uint32 workflowId, uint8 stageIndex) external view returns (Stage memory);

    /// @notice The workflow version new requests of `workflowType` are pinned to.
    /// @param workflowType The request type.
    /// @return The active workflow version (0: none).
    function activeWorkflowOf(bytes32 workflowType) external view returns (uint32);

    /// @notice Where the review of a request stands: workflow, current stage, phase and its decisions.
    /// @param tokenId The licence request.
    /// @return The request's progress (all zero before submission).
    function progressOf(uint256 tokenId) external view returns (Progress memory);

    /// @notice Decisions of every position of a stage of a request (the current one or a stored one).
    /// @param tokenId The licence request.
    /// @param stageIndex The stage.
    /// @return departmentIds The department of each position, in the stage's order (empty before submission).
    /// @return statuses The decision of each position.
    /// @return reviewedMasks The documents each position reviewed: bit i = document index i.
    function decisionsOf(uint256 tokenId, uint8 stageIndex)
        external
        view
        returns (uint16[] memory departmentIds, DecisionStatus[] memory statuses, uint16[] memory reviewedMasks);

    /// @notice Departments that can decide now in the current stage (their turn, not yet decided).
    /// @param tokenId The licence request.
    /// @return departmentIds The departments, in the stage's order (empty unless the request is under review).
    function pendingDepartmentsOf(uint256 tokenId) external view returns (uint16[] memory departmentIds);
}
