// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {LowLevelCall} from "@openzeppelin/contracts/utils/LowLevelCall.sol";

import {IApprovalRegistry} from "./interfaces/IApprovalRegistry.sol";
import {IDecisionVerifier} from "./interfaces/IDecisionVerifier.sol";
import {IDocumentRegistry} from "./interfaces/IDocumentRegistry.sol";
import {ILicenceToken} from "./interfaces/ILicenceToken.sol";
import {IRegistryExtension} from "./interfaces/IRegistryExtension.sol";
import {Roles} from "./libraries/Roles.sol";
import {StageLedger} from "./libraries/StageLedger.sol";

/// @title ApprovalRegistry
/// @notice Departments, workflow versions and the review of every request. The only address the licence token
/// and the document registry take review changes from (wired at deployment): no one but the departments' own
/// wallets, deciding in the pinned workflow's order, can make a licence Approved. A department's wallet changes
/// only after a public, cancellable delay, and no role holder can be a department wallet, so an administrator
/// cannot decide for a department.
/// @dev A request's review lives in one slot (Progress) holding the current stage's decisions, so a decision
/// writes one existing slot. Completed stages keep their decisions in `_stageLedgers` for invalidation.
contract ApprovalRegistry is AccessControl, IApprovalRegistry {
    using StageLedger for uint256;

    /// @notice Maximum number of stages of a workflow.
    uint8 public constant MAX_STAGES = 16;
    /// @notice Maximum number of departments of a stage.
    uint8 public constant MAX_STAGE_DEPARTMENTS = 8;
    /// @notice Highest reason code a department can reject with.
    /// @dev Department rejection reasons: 1 SAFETY_VIOLATION, 2 INCOMPLETE_DOCUMENTS, 3 POLICY_VIOLATION,
    /// 4 FRAUDULENT_APPLICATION, 5 OTHER. 6 is the automatic rejection of an overdue stage.
    uint8 public constant MAX_REJECTION_REASON = 5;
    /// @notice Reason code of the automatic rejection of an overdue stage (AUTO_REJECT).
    uint8 public constant REASON_TIMEOUT = 6;
    /// @notice The furthest ahead a decision's deadline may be: a signature cannot wait longer than this.
    uint64 public constant MAX_DECISION_LIFETIME = 1 days;
    uint8 private constant _FLAG_TIMEOUT_HANDLED = 1;
    uint8 private constant _NO_MISMATCH = type(uint8).max;

    // EIP-712 domain (EIP-5267 fields 0x1f: name, version, chainId, verifyingContract, salt).
    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract,bytes32 salt)")
    bytes32 private constant _DOMAIN_TYPEHASH = 0xd87cd6ef79d4e2b95e15ce8abf732db51ec771f1ca2edccf22a46c729ac56472;
    bytes32 private constant _NAME_HASH = keccak256("LicenceApprovalRegistry");
    bytes32 private constant _VERSION_HASH = keccak256("2");

    struct Department {
        bytes32 code;
        address wallet;
        Custody custody;
        uint64 nonce; // next nonce of a signed decision
    }

    struct WalletChange {
        address wallet;
        Custody custody;
        uint40 effectiveAt;
        bool consented; // by the department's current wallet
    }

    struct WalletEntry {
        uint16 departmentId;
        bool active;
    }

    /// @notice The licence token whose lifecycle this registry drives.
    ILicenceToken public immutable licenceToken;
    /// @notice The document registry whose versions decisions review.
    IDocumentRegistry public immutable documentRegistry;
    /// @notice The verifier of departments' signed decisions (stateless, fixed at deployment).
    IDecisionVerifier public immutable decisionVerifier;
    /// @notice Checks new workflow stages and department wallets (stateless, fixed at deployment).
    IRegistryExtension public immutable registryExtension;
    // Seconds between a wallet change's proposal and the earliest time it can take effect.
    uint40 private immutable _walletDelay;
    // Per-deployment EIP-712 salt, from the block before deployment: two networks never share a signing domain,
    // even with the same chain id and the same registry address.
    bytes32 private immutable _salt;

    // Number of departments registered (ids are 1..count).
    uint16 private _departmentCount;
    // Department id per code.
    mapping(bytes32 code => uint16 departmentId) private _departmentIds;
    // Code and wallet per department id.
    mapping(uint16 departmentId => Department) private _departments;
    // Department and active flag per wallet: one read authorises a decision.
    mapping(address wallet => WalletEntry) private _wallets;
    // Pending wallet (or custody) change per department.
    mapping(uint16 departmentId => WalletChange) private _walletChanges;

    // Number of workflow versions registered (ids are 1..count).
    uint32 private _workflowCount;
    mapping(uint32 workflowId => Workflow) private _workflows;
    mapping(uint32 workflowId => mapping(uint256 stageIndex => Stage)) private _stages;
    // Active workflow version and latest version number per workflow type.
    mapping(bytes32 workflowType => uint32 workflowId) private _activeWorkflows;
    mapping(bytes32 workflowType => uint16 version) private _latestVersions;

    // Review progress per request.
    mapping(uint256 tokenId => Progress) private _progress;
    // Decisions of the stages other than the current one (completed, or ahead after a reopening).
    mapping(uint256 tokenId => mapping(uint256 stageIndex => uint256 ledger)) private _stageLedgers;

    constructor(
        ILicenceToken licenceToken_,
        IDocumentRegistry documentRegistry_,
        IDecisionVerifier decisionVerifier_,
        IRegistryExtension registryExtension_,
        address admin,
        uint40 walletDelay_
    ) {
        if (walletDelay_ == 0) revert InvalidWalletDelay(walletDelay_);
        licenceToken = licenceToken_;
        documentRegistry = documentRegistry_;
        decisionVerifier = decisionVerifier_;
        registryExtension = registryExtension_;
        _walletDelay = walletDelay_;
        _salt = keccak256(abi.encode(blockhash(block.number - 1), block.timestamp, block.chainid, address(this)));
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // =============================================================================== who decides (governance)

    /// @inheritdoc IApprovalRegistry
    function registerDepartment(bytes32 code, address wallet, Custody custody, bytes calldata keyProof)
        external
        onlyRole(DEFAULT_ADMIN_ROLE)
        returns (uint16 departmentId)
    {
        if (code == bytes32(0)) revert DepartmentInvalidCode();
        if (_departmentIds[code] != 0) revert DepartmentAlreadyRegistered(code);
        _checkNewWallet(wallet);
        _checkKeyProof(code, wallet, custody, keyProof);
        if (_departmentCount == type(uint16).max) revert DepartmentLimitReached();
        departmentId = ++_departmentCount;
        _departmentIds[code] = departmentId;
        _departments[departmentId] = Department(code, wallet, custody, 0);
        _wallets[wallet] = WalletEntry(departmentId, true);
        emit DepartmentRegistered(departmentId, code, wallet, custody);
    }

    /// @inheritdoc IApprovalRegistry
    function proposeDepartmentWallet(bytes32 code, address wallet, Custody custody, bytes calldata keyProof)
        external
        onlyRole(DEFAULT_ADMIN_ROLE)
    {
        uint16 departmentId = _knownDepartment(code);
        // The current wallet may stay, to change only the custody.
        if (wallet != _departments[departmentId].wallet) _checkNewWallet(wallet);
        _checkKeyProof(code, wallet, custody, keyProof);
        uint40 effectiveAt = uint40(block.timestamp) + _walletDelay;
        _walletChanges[departmentId] = WalletChange(wallet, custody, effectiveAt, false);
        emit DepartmentWalletProposed(departmentId, wallet, custody, effectiveAt);
    }

    /// @inheritdoc IApprovalRegistry
    function consentDepartmentWallet(bytes32 code) external {
        uint16 departmentId = _knownDepartment(code);
        if (msg.sender != _departments[departmentId].wallet) revert DepartmentUnauthorizedConsent(departmentId, msg.sender);
        WalletChange storage change = _walletChanges[departmentId];
        if (change.wallet == address(0)) revert DepartmentNoWalletChange(departmentId);
        change.consented = true;
        emit DepartmentWalletConsented(departmentId, change.wallet);
    }

    /// @inheritdoc IApprovalRegistry
    function cancelDepartmentWallet(bytes32 code) external {
        uint16 departmentId = _knownDepartment(code);
        if (msg.sender != _departments[departmentId].wallet && !hasRole(Roles.ADMIN_ROLE, msg.sender)) {
            revert DepartmentUnauthorizedCancel(departmentId, msg.sender);
        }
        address proposed = _walletChanges[departmentId].wallet;
        if (proposed == address(0)) revert DepartmentNoWalletChange(departmentId);
        delete _walletChanges[departmentId];
        emit DepartmentWalletCancelled(departmentId, proposed, msg.sender);
    }

    /// @inheritdoc IApprovalRegistry
    function activateDepartmentWallet(bytes32 code) external {
        uint16 departmentId = _knownDepartment(code);
        WalletChange memory change = _walletChanges[departmentId];
        if (change.wallet == address(0)) revert DepartmentNoWalletChange(departmentId);
        Department storage department = _departments[departmentId];
        // Only a department that holds its own key can waive its delay: a custodial wallet's consent is the platform's.
        bool waived = change.consented && department.custody == Custody.DepartmentHeld;
        if (block.timestamp < change.effectiveAt && !waived) {
            revert DepartmentWalletChangeNotDue(departmentId, change.effectiveAt);
        }
        address previous = department.wallet;
        if (change.wallet != previous) {
            // Checked again: the wallet may have been given a role or a department since the proposal.
            _checkNewWallet(change.wallet);
            _wallets[change.wallet] = WalletEntry(departmentId, _wallets[previous].active);
            delete _wallets[previous];
            department.wallet = change.wallet;
        }
        department.custody = change.custody;
        delete _walletChanges[departmentId];
        emit DepartmentWalletRotated(departmentId, previous, change.wallet, change.custody);
    }

    /// @inheritdoc IApprovalRegistry
    function registerWorkflow(
        bytes32 workflowType,
        bytes32 definitionHash,
        uint64 validitySeconds,
        StageInput[] calldata
    ) external onlyRole(DEFAULT_ADMIN_ROLE) returns (uint32 workflowId) {
        // The extension checks the whole call (type, validity, stage count, every stage) and compiles the stages: the
        // call's own bytes go there unchanged, so this contract carries no decoder for the nested stage input.
        (bool ok, bytes memory answer) = address(registryExtension).staticcall(
            abi.encodePacked(IRegistryExtension.compileWorkflow.selector, msg.data[4:])
        );
        if (!ok) LowLevelCall.bubbleRevert(answer);
        Stage[] memory compiled = abi.decode(answer, (Stage[]));
        uint256 stageCount = compiled.length;
        workflowId = ++_workflowCount;
        for (uint256 i = 0; i < stageCount; ++i) {
            _stages[workflowId][i] = compiled[i];
            emit WorkflowStageRegistered(workflowId, uint8(i), compiled[i]);
        }
        uint16 version = ++_latestVersions[workflowType];
        _workflows[workflowId] = Workflow({
            workflowType: workflowType,
            definitionHash: definitionHash,
            validitySeconds: validitySeconds,
            version: version,
            stageCount: uint8(stageCount),
            active: true
        });
        emit WorkflowRegistered(workflowId, workflowType, version, definitionHash, uint8(stageCount), validitySeconds);

        uint32 previous = _activeWorkflows[workflowType];
        if (previous != 0) {
            _workflows[previous].active = false;
            emit WorkflowDeactivated(previous, workflowType);
        }
        _activeWorkflows[workflowType] = workflowId;
        licenceToken.setActiveWorkflow(workflowType, workflowId);
    }

    // =============================================================================== administration (ADMIN_ROLE)

    /// @inheritdoc IApprovalRegistry
    function setDepartmentActive(bytes32 code, bool active) external onlyRole(Roles.ADMIN_ROLE) {
        uint16 departmentId = _knownDepartment(code);
        _wallets[_departments[departmentId].wallet].active = active;
        emit DepartmentActiveSet(departmentId, active);
    }

    /// @inheritdoc IApprovalRegistry
    function deactivateWorkflow(uint32 workflowId) external onlyRole(Roles.ADMIN_ROLE) {
        Workflow storage record = _knownWorkflow(workflowId);
        if (!record.active) revert WorkflowInactive(workflowId);
        record.active = false;
        bytes32 workflowType = record.workflowType;
        emit WorkflowDeactivated(workflowId, workflowType);
        if (_activeWorkflows[workflowType] == workflowId) {
            _activeWorkflows[workflowType] = 0;
            licenceToken.setActiveWorkflow(workflowType, 0);
        }
    }

    /// @inheritdoc IApprovalRegistry
    function resolveEscalation(uint256 tokenId, bool reject_, uint8 reasonCode) external onlyRole(Roles.ADMIN_ROLE) {
        Progress memory progress = _progress[tokenId];
        if (progress.phase != Phase.Escalated) revert ReviewWrongPhase(tokenId, progress.phase);
        if (reject_) {
            if (reasonCode == 0) revert ReviewInvalidReason(reasonCode);
            emit EscalationResolved(tokenId, progress.stage, true, reasonCode);
            _close(tokenId, progress, ILicenceToken.Status.Rejected, reasonCode);
            return;
        }
        emit EscalationResolved(tokenId, progress.stage, false, 0);
        _reopen(tokenId, progress, DecisionStatus.Rejected, ResetCause.EscalationReturned);
        _setPhase(tokenId, progress, Phase.InReview);
        _restartClock(tokenId, progress);
        _progress[tokenId] = progress;
        documentRegistry.setPhase(tokenId, IDocumentRegistry.Phase.Review);
    }

    // =============================================================================== applicant actions (OPERATOR_ROLE)

    /// @inheritdoc IApprovalRegistry
    function submit(uint256 tokenId) external onlyRole(Roles.OPERATOR_ROLE) {
        // Once: a request sent back for changes continues through `resubmit`, keeping its review.
        Phase phase = _progress[tokenId].phase;
        if (phase != Phase.NotStarted) revert ReviewWrongPhase(tokenId, phase);
        uint32 workflowId = licenceToken.transition(tokenId, ILicenceToken.Status.Submitted, 0);
        _progress[tokenId] = Progress({
            workflowId: workflowId,
            stage: 0,
            phase: Phase.InReview,
            maxStage: 0,
            flags: 0,
            stageStartedAt: uint40(block.timestamp),
            ledger: 0
        });
        documentRegistry.setPhase(tokenId, IDocumentRegistry.Phase.Review);
        emit ReviewStarted(tokenId, workflowId);
        emit StageStarted(tokenId, 0, uint40(block.timestamp));
        emit ReviewPhaseChanged(tokenId, Phase.InReview);
    }

    /// @inheritdoc IApprovalRegistry
    function resubmit(uint256 tokenId) external onlyRole(Roles.OPERATOR_ROLE) {
        Progress memory progress = _progress[tokenId];
        if (progress.phase != Phase.AwaitingResubmission) revert ReviewWrongPhase(tokenId, progress.phase);
        licenceToken.transition(tokenId, ILicenceToken.Status.Submitted, 0);
        emit Resubmitted(tokenId, progress.stage);
        // Departments that asked for changes decide again; approvals stand unless a document update invalidated them.
        _reopen(tokenId, progress, DecisionStatus.ChangesRequested, ResetCause.Resubmitted);
        _setPhase(tokenId, progress, Phase.InReview);
        _restartClock(tokenId, progress);
        _progress[tokenId] = progress;
    }

    /// @inheritdoc IApprovalRegistry
    function cancel(uint256 tokenId, uint8 reasonCode) external onlyRole(Roles.OPERATOR_ROLE) {
        // The token allows Draft and PendingResubmission -> Cancelled only.
        licenceToken.transition(tokenId, ILicenceToken.Status.Cancelled, reasonCode);
        if (_progress[tokenId].phase != Phase.NotStarted) {
            _progress[tokenId].phase = Phase.Closed;
            emit ReviewPhaseChanged(tokenId, Phase.Closed);
        }
        documentRegistry.setPhase(tokenId, IDocumentRegistry.Phase.Locked);
    }

    // =============================================================================== decisions (department wallets)

    /// @inheritdoc IApprovalRegistry
    function decide(Decision calldata decision) external {
        WalletEntry memory entry = _wallets[msg.sender];
        if (entry.departmentId == 0 || entry.departmentId != decision.departmentId) revert NotADepartment(msg.sender);
        _accept(entry.departmentId, msg.sender, decision);
    }

    /// @inheritdoc IApprovalRegistry
    function decideBySig(Decision calldata decision, bytes calldata signature) external {
        uint16 departmentId = decision.departmentId;
        address wallet = _departments[departmentId].wallet;
        if (wallet == address(0)) revert DepartmentUnknownId(departmentId);
        if (!decisionVerifier.isValidDecision(wallet, decision, _domainSeparator(), signature)) {
            revert ReviewInvalidSignature(departmentId, wallet);
        }
        _accept(departmentId, wallet, decision);
    }

    /// @inheritdoc IApprovalRegistry
    function increaseDecisionNonce(uint64 nonce) external {
        uint16 departmentId = _wallets[msg.sender].departmentId;
        if (departmentId == 0) revert NotADepartment(msg.sender);
        Department storage department = _departments[departmentId];
        uint64 current = department.nonce;
        if (nonce <= current || nonce - current > type(uint32).max) {
            revert ReviewInvalidNonceIncrease(departmentId, current, nonce);
        }
        department.nonce = nonce;
        emit DecisionNonceIncreased(departmentId, current, nonce);
    }

    // =============================================================================== keeper and document registry

    /// @inheritdoc IApprovalRegistry
    function enforceTimeout(uint256 tokenId) external onlyRole(Roles.KEEPER_ROLE) {
        Progress memory progress = _progress[tokenId];
        if (progress.phase != Phase.InReview) revert ReviewWrongPhase(tokenId, progress.phase);
        Stage memory current = _stages[progress.workflowId][progress.stage];
        if (current.timeoutSeconds == 0) revert TimeoutNotSet(tokenId, progress.stage);
        uint40 deadline = progress.stageStartedAt + current.timeoutSeconds;
        if (block.timestamp < deadline) revert TimeoutNotReached(tokenId, progress.stage, deadline);
        if (progress.flags & _FLAG_TIMEOUT_HANDLED != 0) revert TimeoutAlreadyHandled(tokenId, progress.stage);

        emit StageTimedOut(tokenId, progress.stage, current.onTimeout);
        if (current.onTimeout == TimeoutAction.AutoReject) {
            _close(tokenId, progress, ILicenceToken.Status.Rejected, REASON_TIMEOUT);
            return;
        }
        progress.flags |= _FLAG_TIMEOUT_HANDLED;
        if (current.onTimeout == TimeoutAction.Escalate) {
            _escalate(tokenId, progress, EscalationCause.Timeout, 0);
        } else {
            _progress[tokenId] = progress;
        }
    }

    /// @inheritdoc IApprovalRegistry
    function invalidateReviews(uint256 tokenId, uint8 docIndex, uint16 newVersion) external {
        if (msg.sender != address(documentRegistry)) revert NotDocumentRegistry(msg.sender);
        Progress memory progress = _progress[tokenId];
        if (progress.phase == Phase.NotStarted || progress.phase == Phase.Closed) return;

        // A new version reopens the approvals that reviewed the document; a document added under review was seen
        // by no one, so it reopens every approval of every stage reached, wherever the operator added it.
        bool added = newVersion == 1;
        uint8 reopenTo = type(uint8).max;
        // Bounded: at most MAX_STAGES stages.
        for (uint8 s = 0; s <= progress.maxStage; ++s) {
            bool isCurrent = s == progress.stage;
            uint256 ledger = isCurrent ? progress.ledger : _stageLedgers[tokenId][s];
            if (ledger == 0) continue;
            (uint256 updated, uint8 hits) = added
                ? ledger.invalidateApprovals(MAX_STAGE_DEPARTMENTS)
                : ledger.invalidate(MAX_STAGE_DEPARTMENTS, docIndex);
            if (hits == 0) continue;
            _emitInvalidations(tokenId, progress.workflowId, s, hits, docIndex, newVersion);
            if (isCurrent) {
                progress.ledger = uint152(updated);
            } else {
                _stageLedgers[tokenId][s] = updated;
                if (s < progress.stage && reopenTo == type(uint8).max) reopenTo = s;
            }
        }

        if (reopenTo != type(uint8).max) {
            // A completed stage lost an approval: review goes back to the earliest such stage. The stage being
            // left keeps its approvals; requests for changes there are superseded by the update.
            emit StageReopened(tokenId, progress.stage, reopenTo);
            _reopen(tokenId, progress, DecisionStatus.ChangesRequested, ResetCause.StageReopened);
            _stageLedgers[tokenId][progress.stage] = progress.ledger;
            progress.stage = reopenTo;
            progress.ledger = uint152(_stageLedgers[tokenId][reopenTo]);
            _restartClock(tokenId, progress);
        }
        _progress[tokenId] = progress;
    }

    // =============================================================================== reads

    /// @inheritdoc IApprovalRegistry
    function departmentByCode(bytes32 code) external view returns (uint16 departmentId, address wallet, bool active) {
        departmentId = _knownDepartment(code);
        wallet = _departments[departmentId].wallet;
        active = _wallets[wallet].active;
    }

    /// @inheritdoc IApprovalRegistry
    function departmentRecord(uint16 departmentId) external view returns (DepartmentRecord memory record) {
        Department memory department = _departments[departmentId];
        if (department.code == bytes32(0)) revert DepartmentUnknownId(departmentId);
        WalletChange memory change = _walletChanges[departmentId];
        record = DepartmentRecord({
            code: department.code,
            wallet: department.wallet,
            custody: department.custody,
            active: _wallets[department.wallet].active,
            nonce: department.nonce,
            pendingWallet: change.wallet,
            pendingCustody: change.custody,
            pendingEffectiveAt: change.effectiveAt,
            pendingConsented: change.consented
        });
    }

    /// @inheritdoc IApprovalRegistry
    function walletDelay() external view returns (uint40) {
        return _walletDelay;
    }

    /// @inheritdoc IApprovalRegistry
    function isDepartmentWallet(address account) external view returns (bool) {
        return _wallets[account].departmentId != 0;
    }

    /// @notice The EIP-712 domain of decisions and key proofs (EIP-5267): name, version, chain id, this registry
    /// and the per-deployment salt. Wallets and auditors build the typed data from it.
    function eip712Domain()
        external
        view
        returns (bytes1, string memory, string memory, uint256, address, bytes32, uint256[] memory)
    {
        _forward(address(registryExtension), abi.encodeCall(IRegistryExtension.eip712Domain, (_salt)));
    }

    /// @inheritdoc IApprovalRegistry
    function workflow(uint32 workflowId) external view returns (Workflow memory) {
        return _knownWorkflow(workflowId);
    }

    /// @inheritdoc IApprovalRegistry
    function stage(uint32 workflowId, uint8 stageIndex) external view returns (Stage memory) {
        Workflow storage record = _knownWorkflow(workflowId);
        if (stageIndex >= record.stageCount) revert WorkflowUnknownStage(workflowId, stageIndex);
        return _stages[workflowId][stageIndex];
    }

    /// @inheritdoc IApprovalRegistry
    function activeWorkflowOf(bytes32 workflowType) external view returns (uint32) {
        return _activeWorkflows[workflowType];
    }

    /// @inheritdoc IApprovalRegistry
    function progressOf(uint256 tokenId) external view returns (Progress memory) {
        return _progress[tokenId];
    }

    /// @inheritdoc IApprovalRegistry
    function decisionsOf(uint256 tokenId, uint8 stageIndex)
        external
        view
        returns (uint16[] memory departmentIds, DecisionStatus[] memory statuses, uint16[] memory reviewedMasks)
    {
        Progress memory progress = _progress[tokenId];
        if (progress.phase == Phase.NotStarted) return (departmentIds, statuses, reviewedMasks);
        uint256 ledger = stageIndex == progress.stage ? progress.ledger : _stageLedgers[tokenId][stageIndex];
        _forward(
            address(registryExtension),
            abi.encodeCall(
                IRegistryExtension.unpackDecisions, (_stages[progress.workflowId][stageIndex], ledger)
            )
        );
    }

    /// @inheritdoc IApprovalRegistry
    function pendingDepartmentsOf(uint256 tokenId) external view returns (uint16[] memory departmentIds) {
        Progress memory progress = _progress[tokenId];
        if (progress.phase != Phase.InReview) return departmentIds;
        _forward(
            address(registryExtension),
            abi.encodeCall(
                IRegistryExtension.pendingDepartments, (_stages[progress.workflowId][progress.stage], progress.ledger)
            )
        );
    }

    /// @dev Returns `target`'s answer to `call` as this function's own (same ABI encoding): the views' unpacking
    /// code lives in the stateless extension.
    function _forward(address target, bytes memory call) private view {
        (bool ok, bytes memory answer) = target.staticcall(call);
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            if iszero(ok) { revert(add(answer, 0x20), mload(answer)) }
            return(add(answer, 0x20), mload(answer))
        }
    }

    // =============================================================================== internals

    /// @dev Deadline, nonce (consumed) and active flag of a department's decision, then its effects.
    function _accept(uint16 departmentId, address wallet, Decision calldata decision) private {
        if (!_wallets[wallet].active) revert DepartmentInactive(departmentId);
        if (block.timestamp > decision.deadline) revert ReviewSignatureExpired(decision.deadline);
        if (decision.deadline > block.timestamp + MAX_DECISION_LIFETIME) {
            revert ReviewDeadlineTooFar(decision.deadline, block.timestamp + MAX_DECISION_LIFETIME);
        }
        Department storage department = _departments[departmentId];
        uint64 expected = department.nonce;
        if (decision.nonce != expected) revert ReviewInvalidNonce(departmentId, expected, decision.nonce);
        // unchecked: one nonce per decision; 2^64 decisions of one department cannot happen.
        unchecked {
            department.nonce = expected + 1;
        }
        _decide(departmentId, wallet, department.custody, decision);
    }

    function _decide(uint16 departmentId, address signer, Custody custody, Decision calldata input) private {
        uint256 tokenId = input.tokenId;
        DecisionStatus decision = input.decision;
        if (decision == DecisionStatus.Rejected) {
            if (input.reasonCode == 0 || input.reasonCode > MAX_REJECTION_REASON) {
                revert ReviewInvalidReason(input.reasonCode);
            }
        } else if (decision != DecisionStatus.Approved && decision != DecisionStatus.ChangesRequested) {
            revert ReviewInvalidDecision(decision);
        } else if (input.reasonCode != 0) {
            revert ReviewInvalidReason(input.reasonCode);
        }
        (Progress memory progress, Stage memory current) =
            _recordDecision(tokenId, departmentId, signer, custody, input);
        uint8 reasonCode = input.reasonCode;

        if (decision == DecisionStatus.Approved) {
            if (_isComplete(current, progress.ledger)) _completeStage(tokenId, progress);
            else _progress[tokenId] = progress;
        } else if (decision == DecisionStatus.ChangesRequested) {
            _setPhase(tokenId, progress, Phase.AwaitingResubmission);
            _progress[tokenId] = progress;
            licenceToken.transition(tokenId, ILicenceToken.Status.PendingResubmission, 0);
        } else if (current.onRejection == RejectionAction.FailRequest) {
            _close(tokenId, progress, ILicenceToken.Status.Rejected, reasonCode);
        } else if (current.onRejection == RejectionAction.RetryStage) {
            emit StageRetried(tokenId, progress.stage);
            uint8 cleared = uint256(progress.ledger).decidedPositions(current.departmentCount);
            emit DecisionsReset(tokenId, progress.stage, cleared, ResetCause.StageRetried);
            progress.ledger = 0;
            _setPhase(tokenId, progress, Phase.AwaitingResubmission);
            _progress[tokenId] = progress;
            licenceToken.transition(tokenId, ILicenceToken.Status.PendingResubmission, reasonCode);
        } else {
            _escalate(tokenId, progress, EscalationCause.Rejection, departmentId);
        }
    }

    /// @dev Checks that the department may decide now, in this stage and round, on the latest versions of the
    /// documents it names, sets its decision in the (memory) progress and emits DecisionRecorded. The caller
    /// stores the progress.
    function _recordDecision(
        uint256 tokenId,
        uint16 departmentId,
        address signer,
        Custody custody,
        Decision calldata input
    ) private returns (Progress memory progress, Stage memory current) {
        progress = _progress[tokenId];
        if (progress.phase != Phase.InReview) revert ReviewWrongPhase(tokenId, progress.phase);
        if (input.stage != progress.stage || input.round != progress.stageStartedAt) {
            revert ReviewWrongRound(tokenId, input.stage, input.round, progress.stage, progress.stageStartedAt);
        }
        current = _stages[progress.workflowId][progress.stage];

        uint256 position = _positionOf(tokenId, progress.stage, current, departmentId);
        DecisionStatus previous = uint256(progress.ledger).statusAt(position);
        if (previous != DecisionStatus.Pending && previous != DecisionStatus.ReviewRequired) {
            revert ReviewAlreadyDecided(tokenId, progress.stage, departmentId, previous);
        }
        if (current.executionType == ExecutionType.Sequential) {
            uint8 turn = uint256(progress.ledger).firstNotApproved(current.departmentCount);
            if (turn != position) revert ReviewNotYourTurn(tokenId, progress.stage, departmentId, turn);
        }
        (uint16 reviewedMask, uint256 documents) = _reviewedDocuments(tokenId, input.reviewedMask, input.documents);
        progress.ledger = uint152(uint256(progress.ledger).set(position, input.decision, reviewedMask));
        emit DecisionRecorded(
            tokenId,
            departmentId,
            progress.stage,
            input.decision,
            input.reasonCode,
            reviewedMask,
            documents,
            input.remarksHash,
            signer,
            custody
        );
    }

    /// @dev The documents a decision covers (all of the request's when `reviewedMask` is 0) and the document
    /// registry's packed word, after checking that the mask names only documents the request has and that each
    /// hash named is the latest anchored version of its document.
    function _reviewedDocuments(uint256 tokenId, uint16 reviewedMask, bytes32[] calldata hashes)
        private
        view
        returns (uint16 mask, uint256 documents)
    {
        uint8 mismatch;
        (mask, documents, mismatch) = documentRegistry.checkReviewed(tokenId, reviewedMask, hashes);
        uint256 documentCount = uint8(documents >> 8);
        if (uint256(reviewedMask) >> documentCount != 0) {
            revert ReviewUnknownDocuments(tokenId, reviewedMask, uint8(documentCount));
        }
        if (mismatch != _NO_MISMATCH) {
            // The hash named for that document: the one after those of the lower covered indexes.
            uint256 k;
            for (uint256 below = mask & ((uint256(1) << mismatch) - 1); below != 0; below &= below - 1) ++k;
            revert ReviewStaleDocuments(tokenId, mismatch, k < hashes.length ? hashes[k] : bytes32(0));
        }
    }

    /// @dev The domain separator of decisions and key proofs (recomputed: the chain id is read at each call).
    function _domainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(
                _DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, address(this), _salt
            )
        );
    }

    /// @dev Reverts unless `proof` is `wallet`'s signature of DepartmentKey(code, wallet, custody).
    function _checkKeyProof(bytes32 code, address wallet, Custody custody, bytes calldata proof) private view {
        if (!decisionVerifier.isValidKeyProof(code, wallet, uint8(custody), _domainSeparator(), proof)) {
            revert DepartmentInvalidKeyProof(code, wallet);
        }
    }

    /// @dev Reverts unless `wallet` can become a department wallet (RegistryExtension.checkNewWallet).
    function _checkNewWallet(address wallet) private view {
        registryExtension.checkNewWallet(wallet);
    }

    /// @dev No role goes to a department wallet: a role holder never decides for a department.
    function _grantRole(bytes32 role, address account) internal override returns (bool) {
        if (_wallets[account].departmentId != 0) revert DepartmentWalletHoldsRole(account);
        return super._grantRole(role, account);
    }

    /// @dev The current stage is complete: advance (past stages already complete after a reopening) or issue.
    function _completeStage(uint256 tokenId, Progress memory progress) private {
        Workflow storage record = _workflows[progress.workflowId];
        uint8 stageCount = record.stageCount;
        // Bounded: each iteration moves one stage forward, at most MAX_STAGES.
        while (true) {
            emit StageCompleted(tokenId, progress.stage);
            if (progress.stage + 1 == stageCount) {
                _setPhase(tokenId, progress, Phase.Closed);
                _progress[tokenId] = progress;
                uint64 validity = record.validitySeconds;
                licenceToken.issue(tokenId, validity == 0 ? 0 : uint40(block.timestamp + validity));
                documentRegistry.setPhase(tokenId, IDocumentRegistry.Phase.Locked);
                return;
            }
            _stageLedgers[tokenId][progress.stage] = progress.ledger;
            progress.stage += 1;
            uint256 ledger;
            if (progress.stage > progress.maxStage) progress.maxStage = progress.stage;
            else ledger = _stageLedgers[tokenId][progress.stage];
            progress.ledger = uint152(ledger);
            _restartClock(tokenId, progress);
            if (ledger == 0 || !_isComplete(_stages[progress.workflowId][progress.stage], ledger)) {
                _progress[tokenId] = progress;
                return;
            }
        }
    }

    function _close(uint256 tokenId, Progress memory progress, ILicenceToken.Status status, uint8 reasonCode)
        private
    {
        _setPhase(tokenId, progress, Phase.Closed);
        _progress[tokenId] = progress;
        licenceToken.transition(tokenId, status, reasonCode);
        documentRegistry.setPhase(tokenId, IDocumentRegistry.Phase.Locked);
    }

    /// @dev Documents are frozen while an administrator decides.
    function _escalate(uint256 tokenId, Progress memory progress, EscalationCause cause, uint16 departmentId)
        private
    {
        _setPhase(tokenId, progress, Phase.Escalated);
        _progress[tokenId] = progress;
        emit StageEscalated(tokenId, progress.stage, cause, departmentId);
        documentRegistry.setPhase(tokenId, IDocumentRegistry.Phase.Locked);
    }

    /// @dev Sets the (memory) progress's phase and says so; the caller stores the progress.
    function _setPhase(uint256 tokenId, Progress memory progress, Phase phase) private {
        progress.phase = phase;
        emit ReviewPhaseChanged(tokenId, phase);
    }

    /// @dev The current stage's decisions holding `status` go back to Pending in the (memory) progress, and
    /// DecisionsReset says which (nothing when none did); the caller stores the progress.
    function _reopen(uint256 tokenId, Progress memory progress, DecisionStatus status, ResetCause cause) private {
        (uint256 ledger, uint8 positions) = uint256(progress.ledger).reopen(MAX_STAGE_DEPARTMENTS, status);
        if (positions == 0) return;
        progress.ledger = uint152(ledger);
        emit DecisionsReset(tokenId, progress.stage, positions, cause);
    }

    function _restartClock(uint256 tokenId, Progress memory progress) private {
        progress.stageStartedAt = uint40(block.timestamp);
        progress.flags = 0;
        emit StageStarted(tokenId, progress.stage, uint40(block.timestamp));
    }

    /// @dev A stage is complete when its rule is met and no department of it still has to review again.
    function _isComplete(Stage memory definition, uint256 ledger) private pure returns (bool) {
        if (ledger.anyReviewRequired(definition.departmentCount)) return false;
        uint8 approved = ledger.approvedPositions(definition.departmentCount);
        if (approved & definition.mandatoryMask != definition.mandatoryMask) return false;
        uint256 count;
        for (uint8 bits = approved; bits != 0; bits &= bits - 1) ++count;
        if (definition.completion == Completion.All) return count == definition.departmentCount;
        if (definition.completion == Completion.Any) return count >= 1;
        return count >= definition.threshold;
    }

    function _positionOf(uint256 tokenId, uint8 stageIndex, Stage memory definition, uint16 departmentId)
        private
        pure
        returns (uint256)
    {
        for (uint256 p = 0; p < definition.departmentCount; ++p) {
            if (_departmentAt(definition, p) == departmentId) return p;
        }
        revert ReviewNotRequired(tokenId, stageIndex, departmentId);
    }

    function _departmentAt(Stage memory definition, uint256 position) private pure returns (uint16) {
        return uint16(definition.departmentIds >> (16 * position));
    }

    function _emitInvalidations(
        uint256 tokenId,
        uint32 workflowId,
        uint8 stageIndex,
        uint8 hits,
        uint8 docIndex,
        uint16 newVersion
    ) private {
        Stage memory definition = _stages[workflowId][stageIndex];
        for (uint256 p = 0; p < definition.departmentCount; ++p) {
            if ((hits >> p) & 1 == 1) {
                emit ReviewInvalidated(tokenId, _departmentAt(definition, p), stageIndex, docIndex, newVersion);
            }
        }
    }

    function _knownDepartment(bytes32 code) private view returns (uint16 departmentId) {
        departmentId = _departmentIds[code];
        if (departmentId == 0) revert DepartmentUnknown(code);
    }

    function _knownWorkflow(uint32 workflowId) private view returns (Workflow storage record) {
        if (workflowId == 0 || workflowId > _workflowCount) revert WorkflowUnknown(workflowId);
        return _workflows[workflowId];
    }
}
