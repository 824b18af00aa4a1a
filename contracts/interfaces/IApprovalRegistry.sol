// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Approval registry: departments, versioned workflows and every department's decision on every request.
/// @notice A request follows the workflow version pinned at its creation. Only the wallet of a department
/// required in the current stage can decide (in listed order for SEQUENTIAL stages). When the stage's completion
/// rule is met the request advances; after the last stage the licence is issued in the same transaction.
interface IApprovalRegistry {
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

    event DepartmentRegistered(uint16 indexed departmentId, bytes32 indexed code, address indexed wallet);
    event DepartmentActiveSet(uint16 indexed departmentId, bool active);
    event DepartmentWalletRotated(uint16 indexed departmentId, address indexed previousWallet, address indexed wallet);

    event WorkflowRegistered(
        uint32 indexed workflowId,
        bytes32 indexed workflowType,
        uint16 version,
        bytes32 definitionHash,
        uint8 stageCount,
        uint64 validitySeconds
    );
    event WorkflowStageRegistered(uint32 indexed workflowId, uint8 indexed stageIndex, Stage stage);
    event WorkflowDeactivated(uint32 indexed workflowId, bytes32 indexed workflowType);

    /// @notice The applicant submitted the request: review starts at stage 0 of `workflowId`.
    event ReviewStarted(uint256 indexed tokenId, uint32 indexed workflowId);
    /// @notice The applicant resubmitted after a request for changes (or a stage to retry).
    event Resubmitted(uint256 indexed tokenId, uint8 indexed stage);
    /// @notice Stage `stage` became current (or its clock restarted) at `startedAt`.
    event StageStarted(uint256 indexed tokenId, uint8 indexed stage, uint40 startedAt);
    /// @notice Stage `stage` met its completion rule.
    event StageCompleted(uint256 indexed tokenId, uint8 indexed stage);
    /// @notice A document update invalidated an approval of the completed stage `toStage`: review goes back there.
    event StageReopened(uint256 indexed tokenId, uint8 fromStage, uint8 toStage);
    /// @notice A rejection with RetryStage cleared the stage's decisions; it restarts after resubmission.
    event StageRetried(uint256 indexed tokenId, uint8 indexed stage);
    event StageEscalated(uint256 indexed tokenId, uint8 indexed stage, EscalationCause cause, uint16 departmentId);
    event EscalationResolved(uint256 indexed tokenId, uint8 indexed stage, bool rejected, uint8 reasonCode);
    event StageTimedOut(uint256 indexed tokenId, uint8 indexed stage, TimeoutAction action);

    /// @notice Department `departmentId` decided. `reviewedMask` bit i = document index i; `documentVersions`
    /// is the document registry's packed word at that moment (15 bits per index from bit 16: latest version),
    /// so the exact versions reviewed are on chain. `remarksHash` is keccak256 of the off-chain remarks.
    event DecisionRecorded(
        uint256 indexed tokenId,
        uint16 indexed departmentId,
        uint8 indexed stage,
        DecisionStatus decision,
        uint8 reasonCode,
        uint16 reviewedMask,
        uint256 documentVersions,
        bytes32 remarksHash
    );
    /// @notice A new version of document `docIndex` invalidated this department's approval in `stage`.
    event ReviewInvalidated(
        uint256 indexed tokenId, uint16 indexed departmentId, uint8 indexed stage, uint8 docIndex, uint16 newVersion
    );

    error DepartmentInvalidCode();
    error DepartmentInvalidWallet(address wallet);
    error DepartmentAlreadyRegistered(bytes32 code);
    error DepartmentWalletInUse(address wallet);
    error DepartmentUnknown(bytes32 code);
    error DepartmentInactive(uint16 departmentId);
    error DepartmentLimitReached();
    /// @dev The caller's wallet belongs to no department.
    error NotADepartment(address caller);

    error WorkflowUnknown(uint32 workflowId);
    error WorkflowInactive(uint32 workflowId);
    error WorkflowInvalidType();
    error WorkflowInvalidStageCount(uint256 count);
    error WorkflowInvalidStageDepartments(uint256 stageIndex, uint256 count);
    error WorkflowDuplicateDepartment(uint256 stageIndex, bytes32 code);
    error WorkflowInvalidThreshold(uint256 stageIndex, uint8 threshold);
    error WorkflowInvalidMandatoryMask(uint256 stageIndex, uint8 mandatoryMask);
    error WorkflowInvalidTimeout(uint256 stageIndex);
    /// @dev A licence lifetime above 2^32-1 seconds (136 years) could overflow the 40-bit expiry.
    error WorkflowInvalidValidity(uint64 validitySeconds);

    /// @dev The request is not in the phase this call needs.
    error ReviewWrongPhase(uint256 tokenId, Phase phase);
    /// @dev The caller's department is not required in the request's current stage.
    error ReviewNotRequired(uint256 tokenId, uint8 stage, uint16 departmentId);
    /// @dev SEQUENTIAL stage: the department at `waitingPosition` must decide first.
    error ReviewNotYourTurn(uint256 tokenId, uint8 stage, uint16 departmentId, uint8 waitingPosition);
    /// @dev The department already decided in this stage (and no document update reopened its review).
    error ReviewAlreadyDecided(uint256 tokenId, uint8 stage, uint16 departmentId, DecisionStatus status);
    /// @dev `reviewedMask` names documents the request does not have.
    error ReviewUnknownDocuments(uint256 tokenId, uint16 reviewedMask, uint8 documentCount);
    /// @dev Department rejections carry reason codes 1..5 (SAFETY_VIOLATION .. OTHER).
    error ReviewInvalidReason(uint8 reasonCode);
    error TimeoutNotSet(uint256 tokenId, uint8 stage);
    error TimeoutNotReached(uint256 tokenId, uint8 stage, uint40 deadline);
    error TimeoutAlreadyHandled(uint256 tokenId, uint8 stage);
    error NotDocumentRegistry(address caller);

    // ------------------------------------------------------------------ administration (ADMIN_ROLE)

    /// @notice Registers a department with its wallet. Ids start at 1.
    function registerDepartment(bytes32 code, address wallet) external returns (uint16 departmentId);

    /// @notice Activates or deactivates a department: an inactive department cannot decide.
    function setDepartmentActive(bytes32 code, bool active) external;

    /// @notice Replaces a department's wallet; the old wallet stops being able to decide at once.
    function rotateDepartmentWallet(bytes32 code, address wallet) external;

    /// @notice Registers the next version of the workflow of `workflowType` and makes it the active one
    /// (new requests of that type are pinned to it; requests already created keep theirs).
    function registerWorkflow(
        bytes32 workflowType,
        bytes32 definitionHash,
        uint64 validitySeconds,
        StageInput[] calldata stages
    ) external returns (uint32 workflowId);

    /// @notice Deactivates a workflow version: no new request can be pinned to it.
    function deactivateWorkflow(uint32 workflowId) external;

    /// @notice Resolves an escalated stage: `reject` rejects the request (with `reasonCode`); otherwise the
    /// rejecting department (if any) must decide again and the stage's clock restarts.
    function resolveEscalation(uint256 tokenId, bool reject, uint8 reasonCode) external;

    // ------------------------------------------------------------------ applicant actions (OPERATOR_ROLE)

    /// @notice Draft -> Submitted: review starts at the first stage of the pinned workflow. Only once per request
    /// (a request sent back for changes continues with `resubmit`).
    function submit(uint256 tokenId) external;

    /// @notice PendingResubmission -> Submitted: review continues in the same stage.
    function resubmit(uint256 tokenId) external;

    /// @notice Draft or PendingResubmission -> Cancelled.
    function cancel(uint256 tokenId, uint8 reasonCode) external;

    // ------------------------------------------------------------------ department decisions (department wallets)

    /// @notice Approves the request in the current stage, having reviewed the latest versions of `reviewedMask`.
    function approve(uint256 tokenId, uint16 reviewedMask, bytes32 remarksHash) external;

    /// @notice Rejects the request (reason 1..5); the stage's `onRejection` applies.
    function reject(uint256 tokenId, uint8 reasonCode, uint16 reviewedMask, bytes32 remarksHash) external;

    /// @notice Asks the applicant for changes: Submitted -> PendingResubmission.
    function requestChanges(uint256 tokenId, uint16 reviewedMask, bytes32 remarksHash) external;

    // ------------------------------------------------------------------ keeper and document registry

    /// @notice Acts on an overdue stage (block time past its timeout): NOTIFY, ESCALATE or AUTO_REJECT.
    function enforceTimeout(uint256 tokenId) external;

    /// @notice Called by the document registry when document `docIndex` of `tokenId` gets version `newVersion`.
    function invalidateReviews(uint256 tokenId, uint8 docIndex, uint16 newVersion) external;

    // ------------------------------------------------------------------ reads

    function departmentByCode(bytes32 code) external view returns (uint16 departmentId, address wallet, bool active);
    function departmentById(uint16 departmentId) external view returns (bytes32 code, address wallet, bool active);
    function departmentOfWallet(address wallet) external view returns (uint16 departmentId, bool active);
    function workflow(uint32 workflowId) external view returns (Workflow memory);
    function stage(uint32 workflowId, uint8 stageIndex) external view returns (Stage memory);
    function activeWorkflowOf(bytes32 workflowType) external view returns (uint32);
    function progressOf(uint256 tokenId) external view returns (Progress memory);

    /// @notice Decisions of every position of a stage of a request (the current one or a stored one).
    function decisionsOf(uint256 tokenId, uint8 stageIndex)
        external
        view
        returns (uint16[] memory departmentIds, DecisionStatus[] memory statuses, uint16[] memory reviewedMasks);

    /// @notice Departments that can decide now in the current stage (their turn, not yet decided).
    function pendingDepartmentsOf(uint256 tokenId) external view returns (uint16[] memory departmentIds);
}
