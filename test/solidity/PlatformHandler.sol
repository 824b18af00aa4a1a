// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {Vm} from "./Vm.sol";
import {LicenceToken} from "../../contracts/LicenceToken.sol";
import {DocumentRegistry} from "../../contracts/DocumentRegistry.sol";
import {ApprovalRegistry} from "../../contracts/ApprovalRegistry.sol";
import {DecisionVerifier} from "../../contracts/DecisionVerifier.sol";
import {RegistryExtension} from "../../contracts/RegistryExtension.sol";
import {IApprovalRegistry} from "../../contracts/interfaces/IApprovalRegistry.sol";
import {IDocumentRegistry} from "../../contracts/interfaces/IDocumentRegistry.sol";
import {ILicenceToken} from "../../contracts/interfaces/ILicenceToken.sol";
import {Typed} from "./TypedData.sol";

// =====================================================================================================
// Enum values written out as plain numbers, so that the reference model below depends on the
// specification (interfaces' NatSpec) only, never on the contracts' own types or bit-packing.
// =====================================================================================================

// ILicenceToken.Status
uint8 constant S_NONE = 0;
uint8 constant S_DRAFT = 1;
uint8 constant S_SUBMITTED = 2;
uint8 constant S_PENDING_RESUBMISSION = 3;
uint8 constant S_APPROVED = 4;
uint8 constant S_REJECTED = 5;
uint8 constant S_CANCELLED = 6;
uint8 constant S_SUSPENDED = 7;
uint8 constant S_REVOKED = 8;
// IApprovalRegistry.Phase
uint8 constant P_NOT_STARTED = 0;
uint8 constant P_IN_REVIEW = 1;
uint8 constant P_AWAITING = 2;
uint8 constant P_ESCALATED = 3;
uint8 constant P_CLOSED = 4;
// IApprovalRegistry.DecisionStatus
uint8 constant D_PENDING = 0;
uint8 constant D_APPROVED = 1;
uint8 constant D_REJECTED = 2;
uint8 constant D_CHANGES = 3;
uint8 constant D_REVIEW_REQUIRED = 4;
// IDocumentRegistry.Phase
uint8 constant DOC_UNOPENED = 0;
uint8 constant DOC_OPEN = 1;
uint8 constant DOC_REVIEW = 2;
uint8 constant DOC_LOCKED = 3;
// Stage definition enums
uint8 constant EX_SEQUENTIAL = 0;
uint8 constant EX_PARALLEL = 1;
uint8 constant C_ALL = 0;
uint8 constant C_ANY = 1;
uint8 constant C_THRESHOLD = 2;
uint8 constant T_NONE = 0;
uint8 constant T_NOTIFY = 1;
uint8 constant T_ESCALATE = 2;
uint8 constant T_AUTO_REJECT = 3;
uint8 constant R_FAIL = 0;
uint8 constant R_RETRY = 1;
uint8 constant R_ESCALATE = 2;

// Kinds of ghost events (one per attempted call on one token, successful or not).
uint8 constant K_MINT = 1;
uint8 constant K_DOC_ADD = 2;
uint8 constant K_DOC_VERSION = 3; // a = document index
uint8 constant K_SUBMIT = 4;
uint8 constant K_RESUBMIT = 5;
uint8 constant K_CANCEL = 6;
uint8 constant K_DECIDE = 7; // a = decision (D_APPROVED / D_REJECTED / D_CHANGES)
uint8 constant K_TIMEOUT = 8;
uint8 constant K_RESOLVE = 9; // a = 1: reject
uint8 constant K_SUSPEND = 10;
uint8 constant K_REINSTATE = 11;
uint8 constant K_REVOKE = 12;
uint8 constant K_REGISTER_WORKFLOW = 13; // not per token: only used as an action kind
uint8 constant K_WALLET = 14; // a department wallet proposal, cancellation or activation: not per token

uint256 constant G_MAX_STAGES = 3; // the handler registers workflows of 1..3 stages
uint256 constant G_MAX_POSITIONS = 8;
uint8 constant REASON_TIMEOUT = 6;

// Violation categories recorded by the handler.
uint8 constant V_TRANSFER = 0;
uint8 constant V_STAGE = 1;
uint8 constant V_INVALIDATION = 2;
uint8 constant V_DECISION = 3;
uint8 constant V_WIRING = 4;
uint8 constant V_WALLET = 5; // a decision by a wallet that was not the department's for the whole delay
uint8 constant V_LIFECYCLE = 6; // the token or the document phases moved by anyone but the approval registry
uint8 constant V_NONCE = 7; // a department's decision nonce moved otherwise than by one per recorded decision
uint8 constant V_LAST = V_NONCE;

/// @dev The order of secp256k1: private keys are 1..n-1.
uint256 constant SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
/// @dev IApprovalRegistry's MAX_DECISION_LIFETIME, as documented: the furthest ahead a decision's deadline may be.
uint64 constant MAX_DECISION_LIFETIME = 1 days;

/// @dev A private key from a label (the actors' keys are known, so that any of them can sign).
function keyOf(bytes memory label) pure returns (uint256) {
    return 1 + uint256(keccak256(label)) % (SECP256K1_ORDER - 1);
}

/// @notice One stage of a workflow as the handler registered it (department ids unpacked, in listed order).
struct GStage {
    uint8 executionType;
    uint8 completion;
    uint8 threshold;
    uint8 onTimeout;
    uint8 onRejection;
    uint32 timeoutSeconds;
    uint8 mandatoryMask; // effective: every position for ALL
    uint8 count;
    uint16[8] departments;
}

/// @notice One attempted call about one token, as the handler made it, with its outcome.
struct Ev {
    uint8 kind;
    bool ok; // the call succeeded
    bool auth; // the caller held the role the call needs; decisions: the decision named the department's next
    // nonce, the current stage and round, the latest hashes of the documents it covers and a live deadline (who
    // decided is in dept)
    uint8 a; // decision / document index / reject flag
    uint8 reason;
    uint8 stage; // the contract's current stage before the call (informational)
    uint16 dept; // department of the caller's wallet (0: not a department wallet)
    uint16 mask; // reviewed-documents mask of a decision
    uint40 time; // block time of the call
}

/// @notice The reference model's view of one request after replaying its ghost events.
struct M {
    uint8 status;
    uint8 reason;
    uint8 phase;
    uint8 stage;
    uint8 maxStage;
    bool timeoutHandled;
    uint40 startedAt;
    uint40 expiresAt;
    uint8 docPhase;
    uint8 docCount;
    bool issued; // reached Approved at some point
    uint256 firstMismatch; // 1-based index of the first event whose outcome the model disagrees with
    uint8[8][3] st; // decision status per stage and position
    uint16[8][3] mk; // reviewed mask per stage and position
}

/// @notice Reference model of the review, written from the interfaces' NatSpec with plain arrays.
/// Replaying a token's ghost events says, for each call, whether it should have succeeded, and yields the
/// state the contracts should be in.
library RefModel {
    function replay(Ev[] memory log, GStage[] memory stages, uint64 validity) internal pure returns (M memory m) {
        for (uint256 i = 0; i < log.length; ++i) {
            bool legal = step(m, log[i], stages, validity);
            if (legal != log[i].ok && m.firstMismatch == 0) m.firstMismatch = i + 1;
        }
    }

    function step(M memory m, Ev memory e, GStage[] memory stages, uint64 validity) internal pure returns (bool) {
        uint8 k = e.kind;
        if (k == K_MINT) {
            if (!e.auth || m.status != S_NONE) return false;
            m.status = S_DRAFT;
            return true;
        }
        if (k == K_DOC_ADD) {
            if (!e.auth || m.status == S_NONE || m.docCount >= 16) return false;
            if (m.docPhase == DOC_UNOPENED) {
                if (m.status != S_DRAFT) return false;
                m.docPhase = DOC_OPEN;
            } else if (m.docPhase == DOC_LOCKED) {
                return false;
            }
            m.docCount += 1;
            // Spec: a document added under review was seen by no one: every approval of every stage reached must
            // be given again, and review goes back to the earliest stage that lost one, as for a new version.
            if (m.docPhase == DOC_REVIEW && m.phase != P_NOT_STARTED && m.phase != P_CLOSED) {
                _invalidate(m, stages, 0, true, e.time);
            }
            return true;
        }
        if (k == K_DOC_VERSION) {
            if (!e.auth || e.a >= m.docCount || m.docPhase == DOC_LOCKED) return false;
            if (m.docPhase == DOC_REVIEW && m.phase != P_NOT_STARTED && m.phase != P_CLOSED) {
                _invalidate(m, stages, e.a, false, e.time);
            }
            return true;
        }
        if (k == K_SUBMIT) {
            // Spec: Draft -> Submitted, review starts at the first stage.
            if (!e.auth || m.status != S_DRAFT) return false;
            m.status = S_SUBMITTED;
            m.reason = 0;
            m.phase = P_IN_REVIEW;
            m.stage = 0;
            m.maxStage = 0;
            _restart(m, e.time);
            m.docPhase = DOC_REVIEW;
            return true;
        }
        if (k == K_RESUBMIT) {
            if (!e.auth || m.phase != P_AWAITING) return false;
            m.status = S_SUBMITTED;
            m.reason = 0;
            m.phase = P_IN_REVIEW;
            _reset(m, m.stage, D_CHANGES, stages[m.stage].count);
            _restart(m, e.time);
            return true;
        }
        if (k == K_CANCEL) {
            if (!e.auth || (m.status != S_DRAFT && m.status != S_PENDING_RESUBMISSION)) return false;
            m.status = S_CANCELLED;
            m.reason = e.reason;
            if (m.phase != P_NOT_STARTED) m.phase = P_CLOSED;
            m.docPhase = DOC_LOCKED;
            return true;
        }
        if (k == K_DECIDE) return _decide(m, e, stages, validity);
        if (k == K_TIMEOUT) {
            if (!e.auth || m.phase != P_IN_REVIEW) return false;
            GStage memory g = stages[m.stage];
            if (g.timeoutSeconds == 0 || e.time < uint256(m.startedAt) + g.timeoutSeconds || m.timeoutHandled) {
                return false;
            }
            if (g.onTimeout == T_AUTO_REJECT) {
                _close(m, S_REJECTED, REASON_TIMEOUT);
            } else {
                m.timeoutHandled = true;
                if (g.onTimeout == T_ESCALATE) {
                    m.phase = P_ESCALATED;
                    m.docPhase = DOC_LOCKED;
                }
            }
            return true;
        }
        if (k == K_RESOLVE) {
            if (!e.auth || m.phase != P_ESCALATED) return false;
            if (e.a == 1) {
                if (e.reason == 0) return false;
                _close(m, S_REJECTED, e.reason);
                return true;
            }
            _reset(m, m.stage, D_REJECTED, stages[m.stage].count);
            m.phase = P_IN_REVIEW;
            _restart(m, e.time);
            m.docPhase = DOC_REVIEW;
            return true;
        }
        if (k == K_SUSPEND) {
            if (!e.auth || e.reason == 0 || m.status != S_APPROVED) return false;
            m.status = S_SUSPENDED;
            m.reason = e.reason;
            return true;
        }
        if (k == K_REINSTATE) {
            if (!e.auth || m.status != S_SUSPENDED) return false;
            m.status = S_APPROVED;
            m.reason = 0;
            return true;
        }
        if (k == K_REVOKE) {
            if (!e.auth || e.reason == 0 || (m.status != S_APPROVED && m.status != S_SUSPENDED)) return false;
            m.status = S_REVOKED;
            m.reason = e.reason;
            return true;
        }
        revert("RefModel: unknown event kind");
    }

    /// @dev Only the wallet of a department of the current stage, in its turn for SEQUENTIAL, not yet decided.
    function _decide(M memory m, Ev memory e, GStage[] memory stages, uint64 validity) private pure returns (bool) {
        // auth: bound to the department's next nonce, the current stage and round, the latest documents and a
        // deadline within [now, now + MAX_DECISION_LIFETIME].
        if (e.dept == 0 || !e.auth || m.phase != P_IN_REVIEW) return false;
        uint8 s = m.stage;
        GStage memory g = stages[s];
        uint256 p = G_MAX_POSITIONS;
        for (uint256 i = 0; i < g.count; ++i) {
            if (g.departments[i] == e.dept) p = i;
        }
        if (p == G_MAX_POSITIONS) return false;
        uint8 previous = m.st[s][p];
        if (previous != D_PENDING && previous != D_REVIEW_REQUIRED) return false;
        if (g.executionType == EX_SEQUENTIAL) {
            // Every earlier position must have approved.
            for (uint256 i = 0; i < p; ++i) {
                if (m.st[s][i] != D_APPROVED) return false;
            }
        }
        if (e.a == D_REJECTED && (e.reason == 0 || e.reason > 5)) return false;
        if (m.docCount < 16 && (uint256(e.mask) >> m.docCount) != 0) return false;

        m.st[s][p] = e.a;
        m.mk[s][p] = e.mask;
        if (e.a == D_APPROVED) {
            if (stageComplete(g, m.st[s])) _advance(m, stages, validity, e.time);
        } else if (e.a == D_CHANGES) {
            m.phase = P_AWAITING;
            m.status = S_PENDING_RESUBMISSION;
            m.reason = 0;
        } else if (g.onRejection == R_FAIL) {
            _close(m, S_REJECTED, e.reason);
        } else if (g.onRejection == R_RETRY) {
            for (uint256 i = 0; i < G_MAX_POSITIONS; ++i) {
                m.st[s][i] = D_PENDING;
                m.mk[s][i] = 0;
            }
            m.phase = P_AWAITING;
            m.status = S_PENDING_RESUBMISSION;
            m.reason = e.reason;
        } else {
            m.phase = P_ESCALATED;
            m.docPhase = DOC_LOCKED;
        }
        return true;
    }

    /// @notice The stage's completion rule: no department must review again, every mandatory department
    /// approved, and ALL: every department, ANY: at least one, THRESHOLD: at least `threshold`.
    function stageComplete(GStage memory g, uint8[8] memory statuses) internal pure returns (bool) {
        uint256 approved;
        for (uint256 p = 0; p < g.count; ++p) {
            if (statuses[p] == D_REVIEW_REQUIRED) return false;
        }
        for (uint256 p = 0; p < g.count; ++p) {
            if (statuses[p] == D_APPROVED) {
                approved += 1;
            } else if ((g.mandatoryMask >> p) & 1 == 1) {
                return false;
            }
        }
        if (g.completion == C_ALL) return approved == g.count;
        if (g.completion == C_ANY) return approved >= 1;
        return approved >= g.threshold;
    }

    function _advance(M memory m, GStage[] memory stages, uint64 validity, uint40 time) private pure {
        while (true) {
            if (m.stage + 1 == stages.length) {
                m.phase = P_CLOSED;
                m.status = S_APPROVED;
                m.reason = 0;
                m.issued = true;
                m.expiresAt = validity == 0 ? 0 : uint40(time + validity);
                m.docPhase = DOC_LOCKED;
                return;
            }
            m.stage += 1;
            if (m.stage > m.maxStage) m.maxStage = m.stage;
            _restart(m, time);
            if (!stageComplete(stages[m.stage], m.st[m.stage])) return;
        }
    }

    /// @dev A new version of document `docIndex` (`everyApproval`: a new document): every approval (any stage
    /// reached so far) that reviewed it (every approval) needs a new review; if a completed stage lost one, review
    /// goes back to the earliest such stage.
    function _invalidate(M memory m, GStage[] memory stages, uint8 docIndex, bool everyApproval, uint40 time)
        private
        pure
    {
        uint256 reopenTo = type(uint256).max;
        for (uint256 s = 0; s <= m.maxStage; ++s) {
            bool hit;
            for (uint256 p = 0; p < stages[s].count; ++p) {
                if (m.st[s][p] == D_APPROVED && (everyApproval || (m.mk[s][p] >> docIndex) & 1 == 1)) {
                    m.st[s][p] = D_REVIEW_REQUIRED;
                    hit = true;
                }
            }
            if (hit && s < m.stage && reopenTo == type(uint256).max) reopenTo = s;
        }
        if (reopenTo != type(uint256).max) {
            _reset(m, m.stage, D_CHANGES, stages[m.stage].count);
            m.stage = uint8(reopenTo);
            _restart(m, time);
        }
    }

    function _reset(M memory m, uint256 s, uint8 status, uint256 count) private pure {
        for (uint256 p = 0; p < count; ++p) {
            if (m.st[s][p] == status) {
                m.st[s][p] = D_PENDING;
                m.mk[s][p] = 0;
            }
        }
    }

    function _restart(M memory m, uint40 time) private pure {
        m.startedAt = time;
        m.timeoutHandled = false;
    }

    function _close(M memory m, uint8 status, uint8 reason) private pure {
        m.phase = P_CLOSED;
        m.status = status;
        m.reason = reason;
        m.docPhase = DOC_LOCKED;
    }
}

/// @notice Readable name of a ghost event kind, for failure messages.
function kindName(uint8 kind) pure returns (string memory) {
    string[15] memory names = [
        "none", "mint", "anchorDocument", "anchorVersion", "submit", "resubmit", "cancel", "decide",
        "enforceTimeout", "resolveEscalation", "suspend", "reinstate", "revoke", "registerWorkflow", "walletChange"
    ];
    return kind < 15 ? names[kind] : "unknown";
}

/// @notice Readable name of a decision status.
function decisionName(uint8 decision) pure returns (string memory) {
    string[5] memory names = ["Pending", "Approved", "Rejected", "ChangesRequested", "ReviewRequired"];
    return decision < 5 ? names[decision] : "invalid";
}

library Str {
    function u(uint256 value) internal pure returns (string memory) {
        if (value == 0) return "0";
        uint256 digits;
        for (uint256 v = value; v != 0; v /= 10) ++digits;
        bytes memory buffer = new bytes(digits);
        while (value != 0) {
            --digits;
            buffer[digits] = bytes1(uint8(48 + (value % 10)));
            value /= 10;
        }
        return string(buffer);
    }
}

/// @notice Owns a deployed platform (wired as in production) and exposes bounded, fuzzable actions.
/// Every action is wrapped in try/catch; every attempt on a token is logged (ghost events) and, around every
/// action, decisions and stages of every token are snapshotted to check who changed what.
contract PlatformHandler {
    using Str for uint256;

    Vm private constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    bytes32 public constant ADMIN_ROLE = keccak256("ADMIN_ROLE");
    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");
    bytes32 public constant KEEPER_ROLE = keccak256("KEEPER_ROLE");
    /// @notice Delay between a department wallet's proposal and the earliest time it can take effect.
    uint40 public constant WALLET_DELAY = 1 days;

    bytes32 public constant TYPE_A = "TYPE_A";
    bytes32 public constant TYPE_B = "TYPE_B";
    uint256 public constant MAX_TOKENS = 8;
    uint256 public constant DEPARTMENTS = 6;
    uint64 public constant VALIDITY = 365 days;

    LicenceToken public immutable token;
    DocumentRegistry public immutable documents;
    ApprovalRegistry public immutable registry;

    // Every actor has a known key, so that any of them can sign (key proofs, decisions) and role holders can be
    // offered as department wallets with a valid proof: their refusal then comes from the role, not the proof.
    uint256 public immutable governanceKey = keyOf("actor.governance");
    uint256 public immutable strangerKey = keyOf("actor.stranger");
    /// @notice DEFAULT_ADMIN_ROLE on the three contracts (a Safe on a real network): the only one who decides who
    /// decides (departments, their wallets, workflow versions).
    address public immutable governance = vm.addr(keyOf("actor.governance"));
    address public immutable admin = vm.addr(keyOf("actor.admin"));
    address public immutable operator = vm.addr(keyOf("actor.operator"));
    address public immutable keeper = vm.addr(keyOf("actor.keeper"));
    address public immutable stranger = vm.addr(keyOf("actor.stranger"));

    address[6] public deptWallets;
    uint256[6] public deptKeys;
    /// @notice Wallets the fuzzer proposes as new department wallets (and tries to decide from).
    address[6] public spareWallets;
    uint256[6] public spareKeys;
    bytes32[6] public deptCodes;
    address[3] public applicants;
    /// @notice Private key of every actor and wallet the handler knows (0: none).
    mapping(address => uint256) public keyFor;
    /// @notice The registry's EIP-712 domain separator, built from its eip712Domain() and the documented types.
    bytes32 public separator;
    /// @notice Department id of a wallet, as registered by the handler (0: none).
    mapping(address wallet => uint16) public ghostDeptOf;
    /// @notice The department a replaced wallet used to decide for (it keeps trying).
    mapping(address wallet => uint16) public ghostFormerDeptOf;
    /// @notice Current wallet per department id, as the handler saw it registered and activated.
    mapping(uint16 departmentId => address) public ghostWalletOf;
    /// @notice Custody per department id, as registered and activated.
    mapping(uint16 departmentId => IApprovalRegistry.Custody) public ghostCustodyOf;
    /// @notice Block time of the proposal that made `wallet` a department's wallet (0: registered with it).
    mapping(address wallet => uint256) public ghostProposedAt;
    /// @notice Whether `wallet` was activated before its delay, its department-held predecessor having consented.
    mapping(address wallet => bool) public ghostWaived;
    /// @notice Pending proposal per department, as the handler made it.
    mapping(uint16 departmentId => address) public ghostPendingWallet;
    mapping(uint16 departmentId => uint256) public ghostPendingAt;
    mapping(uint16 departmentId => IApprovalRegistry.Custody) public ghostPendingCustody;
    mapping(uint16 departmentId => bool) public ghostPendingConsented;
    /// @notice Next decision nonce per department: one more per recorded decision, or as the department raised it.
    mapping(uint16 departmentId => uint64) public ghostNonce;
    uint256 public ghostWalletsRotated;
    uint256 public ghostDelaysWaived;
    uint256 public ghostDecisionsByRotatedWallets;
    uint256 public ghostLifecycleAttempts;
    uint256 public ghostSignedDecisionsOk;
    uint256 public ghostUnboundRefused; // decisions with a wrong nonce, stage, round, document or deadline, refused
    uint256 public ghostHeldRelayed; // held-back signatures relayed with success
    uint256 public ghostNonceIncreases;

    /// @notice A decision signed earlier and kept to be relayed later (when what it binds may have changed).
    struct Held {
        IApprovalRegistry.Decision decision;
        address signer;
        bytes signature;
    }

    Held[] internal _held;
    uint256 public constant MAX_HELD = 8;

    // ---------------------------------------------------------------- ghost workflows
    uint32 public ghostWorkflowCount;
    mapping(uint32 => uint64) public ghostValidity;
    mapping(uint32 => uint8) public ghostStageCount;
    mapping(uint32 => mapping(uint256 => GStage)) internal _ghostStages;
    mapping(bytes32 => uint32) public ghostActive;

    // ---------------------------------------------------------------- ghost tokens
    uint256[] internal _ids;
    mapping(uint256 => address) public ghostOwner;
    mapping(uint256 => uint32) public ghostWorkflowOf;
    mapping(address => uint256) public ghostBalance;
    mapping(uint256 => Ev[]) internal _log;
    mapping(uint256 => uint16[]) internal _versions;
    mapping(uint256 => bytes32[]) internal _latestHash;
    uint256 private _nonce;

    // ---------------------------------------------------------------- violations and progress counters
    mapping(uint8 => uint256) public violations;
    mapping(uint8 => string) public firstViolation;

    uint256 public ghostCalls;
    uint256 public ghostIssued; // licences that reached Approved
    uint256 public ghostIssuedByFuzz; // ... of which after the bootstrap
    uint256 public ghostDecisionsOk;
    uint256 public ghostDecisionsRefused;
    uint256 public ghostStageAdvances;
    uint256 public ghostReopens;
    uint256 public ghostInvalidated;
    uint256 public ghostEscalations;
    uint256 public ghostTimeouts;
    uint256 public ghostWorkflowsOk;
    uint256 public ghostFuzzSuccesses; // successful calls made by fuzzed actions (after the bootstrap)
    bool private _booted;

    struct Snap {
        uint256 n;
        uint8[] stage;
        uint8[] st;
        uint16[] mk;
        uint8[] docPhase;
    }

    struct Ctx {
        uint256 id;
        uint8 kind;
        bool ok;
        uint16 dept;
        uint8 decision;
        uint16 mask;
        uint8 stageBefore;
        uint8 docIndex;
    }

    constructor(bool bootstrap) {
        token = new LicenceToken("Licence", "LIC", "https://verify.example/", address(this));
        documents = new DocumentRegistry(token, address(this));
        registry = new ApprovalRegistry(
            token, documents, new DecisionVerifier(), new RegistryExtension(), address(this), WALLET_DELAY
        );
        token.setApprovalRegistry(address(registry));
        documents.setReviewRegistry(address(registry));
        token.grantRole(bytes32(0), governance);
        documents.grantRole(bytes32(0), governance);
        registry.grantRole(bytes32(0), governance);
        token.grantRole(OPERATOR_ROLE, operator);
        documents.grantRole(OPERATOR_ROLE, operator);
        registry.grantRole(OPERATOR_ROLE, operator);
        token.grantRole(ADMIN_ROLE, admin);
        registry.grantRole(ADMIN_ROLE, admin);
        registry.grantRole(KEEPER_ROLE, keeper);
        separator = Typed.separatorOf(registry);
        keyFor[governance] = governanceKey;
        keyFor[admin] = keyOf("actor.admin");
        keyFor[operator] = keyOf("actor.operator");
        keyFor[keeper] = keyOf("actor.keeper");
        keyFor[stranger] = strangerKey;

        for (uint256 i = 0; i < DEPARTMENTS; ++i) {
            uint256 key = keyOf(abi.encode("actor.department", i));
            address wallet = vm.addr(key);
            bytes32 code = bytes32(abi.encodePacked("DEPT_", bytes1(uint8(65 + i))));
            // Odd departments hold their own key: their consent can waive a wallet change's delay.
            IApprovalRegistry.Custody custody = IApprovalRegistry.Custody(i % 2);
            deptWallets[i] = wallet;
            deptKeys[i] = key;
            deptCodes[i] = code;
            keyFor[wallet] = key;
            bytes memory proof = Typed.sign(vm, key, Typed.keyDigest(separator, code, wallet, uint8(custody)));
            vm.prank(governance);
            uint16 id = registry.registerDepartment(code, wallet, custody, proof);
            require(id == i + 1, "handler: department ids are 1..6");
            ghostDeptOf[wallet] = id;
            ghostWalletOf[id] = wallet;
            ghostCustodyOf[id] = custody;
            spareKeys[i] = keyOf(abi.encode("actor.spare", i));
            spareWallets[i] = vm.addr(spareKeys[i]);
            keyFor[spareWallets[i]] = spareKeys[i];
        }
        for (uint256 i = 0; i < 3; ++i) {
            applicants[i] = address(uint160(uint256(keccak256(abi.encode("actor.applicant", i)))));
        }
        if (bootstrap) _bootstrap();
        _booted = true;
    }

    // =================================================================================================
    // Fuzzable actions
    // =================================================================================================

    function mint(uint256 idSeed, uint256 ownerSeed, bool typeB, uint256 authSeed) external {
        uint256 id = _ids.length < MAX_TOKENS && idSeed % 8 != 0 ? _ids.length + 1 : 1 + idSeed % MAX_TOKENS;
        _mint(id, applicants[ownerSeed % 3], typeB ? TYPE_B : TYPE_A, _roleActor(authSeed, operator));
    }

    function anchorDocument(uint256 tokenSeed, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_DRAFT) | _bit(S_SUBMITTED) | _bit(S_PENDING_RESUBMISSION));
        if (id != 0) _anchorDocument(id, _roleActor(authSeed, operator));
    }

    function anchorVersion(uint256 tokenSeed, uint256 docSeed, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED) | _bit(S_PENDING_RESUBMISSION) | _bit(S_DRAFT));
        if (id == 0 || _versions[id].length == 0) return;
        _anchorVersion(id, uint8(docSeed % _versions[id].length), _roleActor(authSeed, operator));
    }

    function submit(uint256 tokenSeed, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_DRAFT));
        if (id != 0) _simple(id, K_SUBMIT, 0, 0, _roleActor(authSeed, operator));
    }

    function resubmit(uint256 tokenSeed, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_PENDING_RESUBMISSION));
        if (id != 0) _simple(id, K_RESUBMIT, 0, 0, _roleActor(authSeed, operator));
    }

    function cancel(uint256 tokenSeed, uint8 reason, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_DRAFT) | _bit(S_PENDING_RESUBMISSION));
        if (id != 0) _simple(id, K_CANCEL, 0, reason, _roleActor(authSeed, operator));
    }

    // Decisions: the high bits of maskSeed (`how`) choose the route (sent by the wallet, or signed and relayed by
    // anyone), the deadline, and now and then one field of the decision to get wrong (see _decide).

    /// @notice Approval by a fuzz-chosen actor, biased toward a department whose turn it is.
    function approve(uint256 tokenSeed, uint256 actorSeed, uint256 maskSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED));
        if (id != 0) _decide(id, _decider(id, actorSeed, 10), D_APPROVED, 0, _mask(id, maskSeed), maskSeed >> 128);
    }

    /// @notice Approval by the department whose turn it is (progress), or a random department wallet.
    function approveNext(uint256 tokenSeed, uint256 actorSeed, uint256 maskSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED));
        if (id != 0) _decide(id, _decider(id, actorSeed, 14), D_APPROVED, 0, _mask(id, maskSeed), maskSeed >> 128);
    }

    function reject(uint256 tokenSeed, uint256 actorSeed, uint8 reason, uint256 maskSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED));
        if (id == 0) return;
        if (reason % 8 != 0) reason = 1 + reason % 5; // mostly valid reasons 1..5
        _decide(id, _decider(id, actorSeed, 5), D_REJECTED, reason, _mask(id, maskSeed), maskSeed >> 128);
    }

    function requestChanges(uint256 tokenSeed, uint256 actorSeed, uint256 maskSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED));
        if (id != 0) _decide(id, _decider(id, actorSeed, 6), D_CHANGES, 0, _mask(id, maskSeed), maskSeed >> 128);
    }

    /// @notice A department (or another actor) signs a decision now and keeps it; `relayHeld` relays it later, when
    /// the nonce, the stage, its round, the documents or the time may have moved on.
    function signForLater(uint256 tokenSeed, uint256 actorSeed, uint256 maskSeed, uint256 kindSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED));
        if (id == 0) return;
        address signer = _decider(id, actorSeed, 12);
        uint256 k = kindSeed % 8;
        uint8 decision = k < 5 ? D_APPROVED : k < 7 ? D_CHANGES : D_REJECTED;
        uint8 reason = decision == D_REJECTED ? uint8(1 + (kindSeed >> 3) % 5) : 0;
        IApprovalRegistry.Decision memory d =
            _fresh(id, _claimedDepartment(signer, kindSeed >> 8), decision, reason, _mask(id, maskSeed), kindSeed >> 16);
        bytes memory signature = Typed.sign(vm, _signingKey(signer), Typed.decisionDigest(separator, d));
        Held memory held = Held(d, signer, signature);
        if (_held.length < MAX_HELD) _held.push(held);
        else _held[(kindSeed >> 32) % MAX_HELD] = held;
    }

    /// @notice Anyone relays a held-back signed decision (again, possibly).
    function relayHeld(uint256 indexSeed, uint256 relayerSeed) external {
        if (_held.length == 0) return;
        Held memory held = _held[indexSeed % _held.length];
        uint256 recorded = ghostDecisionsOk;
        _submit(held.decision, held.signer, held.signature, _relayer(relayerSeed));
        if (ghostDecisionsOk != recorded) ghostHeldRelayed++;
    }

    /// @notice A department wallet (or, 1 time in 8, someone else) raises its decision nonce: by 1..4, by 2^32 - 1
    /// (the most allowed), or by nothing, backwards or by exactly 2^32 (refused).
    function increaseNonce(uint256 deptSeed, uint256 amountSeed, uint256 callerSeed) external {
        uint16 dept = uint16(1 + deptSeed % DEPARTMENTS);
        address caller = ghostWalletOf[dept];
        if (callerSeed % 8 == 0) {
            address[5] memory others = [stranger, admin, governance, spareWallets[(callerSeed >> 3) % DEPARTMENTS],
                deptWallets[(callerSeed >> 3) % DEPARTMENTS]];
            caller = others[(callerSeed >> 6) % 5];
        }
        uint16 callerDept = ghostDeptOf[caller];
        uint64 current = ghostNonce[callerDept];
        uint256 m = amountSeed % 8;
        uint256 step = m == 1 ? 2 ** 32 - 1 : m == 2 ? 2 ** 32 : 1 + (amountSeed >> 3) % 4;
        uint64 requested = uint64(current + step);
        if (m == 0) requested = current > 0 && (amountSeed >> 3) % 2 == 1 ? current - 1 : current;
        bool expected = callerDept != 0 && m != 0 && m != 2;
        vm.prank(caller);
        bool ok;
        try registry.increaseDecisionNonce(requested) {ok = true;} catch {}
        ghostCalls++;
        if (ok != expected) {
            _violate(V_NONCE, ok ? "increaseDecisionNonce accepted a caller or nonce it must refuse"
                : "increaseDecisionNonce refused a department raising its own nonce");
        }
        if (ok && callerDept != 0) {
            ghostNonce[callerDept] = requested;
            ghostNonceIncreases++;
            if (_booted) ghostFuzzSuccesses++;
        }
        if (callerDept != 0 && registry.departmentRecord(callerDept).nonce != ghostNonce[callerDept]) {
            _violate(V_NONCE, string.concat("nonce of department ", uint256(callerDept).u(), " differs after an increase"));
        }
    }

    /// @notice Lets time pass, then the keeper (or a stranger) acts on an overdue stage. Time moves by 0, by a
    /// random amount up to 2 days, or (half the time) to one second before / at / after the deadline of the
    /// chosen request's current stage.
    function warpAndEnforceTimeout(uint256 tokenSeed, uint256 dtSeed, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_SUBMITTED));
        uint256 mode = dtSeed % 4;
        uint256 target = block.timestamp;
        if (mode == 1) {
            target += (dtSeed >> 2) % 2 days;
        } else if (mode >= 2 && id != 0) {
            IApprovalRegistry.Progress memory progress = registry.progressOf(id);
            uint256 timeout = _ghostStages[ghostWorkflowOf[id]][progress.stage].timeoutSeconds;
            uint256 deadline = uint256(progress.stageStartedAt) + timeout;
            if (timeout != 0 && deadline + 1 > block.timestamp) target = deadline + (dtSeed >> 2) % 3 - 1;
        }
        if (target > block.timestamp) vm.warp(target);
        if (id != 0) _simple(id, K_TIMEOUT, 0, 0, _roleActor(authSeed, keeper));
    }

    function resolveEscalation(uint256 tokenSeed, bool rejectIt, uint8 reason, uint256 authSeed) external {
        uint256 id = _pickEscalated(tokenSeed);
        if (id != 0) _simple(id, K_RESOLVE, rejectIt ? 1 : 0, reason % 4 == 0 ? 0 : reason, _roleActor(authSeed, admin));
    }

    /// @notice Suspend (2/5), reinstate (2/5) or revoke (1/5) a licence.
    function suspendOrRevoke(uint256 tokenSeed, uint256 kindSeed, uint8 reason, uint256 authSeed) external {
        uint256 id = _pick(tokenSeed, _bit(S_APPROVED) | _bit(S_SUSPENDED));
        if (id == 0) return;
        uint256 k = kindSeed % 5;
        uint8 kind = k < 2 ? K_SUSPEND : k < 4 ? K_REINSTATE : K_REVOKE;
        _simple(id, kind, 0, reason % 8 == 0 ? 0 : reason, _roleActor(authSeed, admin));
    }

    /// @notice Registers a random workflow shape (1..3 stages); about 1 in 8 is deliberately invalid.
    function registerWorkflow(uint256 seed, uint256 authSeed) external {
        _registerRandomWorkflow(seed, _governanceActor(authSeed));
    }

    /// @notice Any transfer or approval path, from the owner or anyone: must revert.
    function tryTransfer(uint256 tokenSeed, uint256 actorSeed, uint256 toSeed, uint8 path) external {
        uint256 n = _ids.length;
        if (n == 0) return;
        uint256 id = _ids[tokenSeed % n];
        address owner = ghostOwner[id];
        address[6] memory callers = [owner, operator, admin, address(registry), stranger, deptWallets[0]];
        address caller = callers[actorSeed % 6];
        address to = toSeed % 3 == 0 ? stranger : address(uint160(toSeed >> 2));
        bool ok;
        vm.prank(caller);
        uint256 p = path % 5;
        if (p == 0) {
            try token.transferFrom(owner, to, id) {ok = true;} catch {}
        } else if (p == 1) {
            try token.safeTransferFrom(owner, to, id) {ok = true;} catch {}
        } else if (p == 2) {
            try token.safeTransferFrom(owner, to, id, abi.encode(toSeed)) {ok = true;} catch {}
        } else if (p == 3) {
            try token.approve(to, id) {ok = true;} catch {}
        } else {
            try token.setApprovalForAll(to, true) {ok = true;} catch {}
        }
        ghostCalls++;
        if (ok) _violate(V_TRANSFER, string.concat("transfer path ", p.u(), " succeeded for token ", id.u()));
        if (token.ownerOf(id) != owner) _violate(V_TRANSFER, string.concat("owner of token ", id.u(), " changed"));
    }

    /// @notice Governance (or, 1 time in 8, the administrator or a stranger: refused) proposes a wallet for a
    /// department with the wallet's key proof (1 time in 8 a wrong one: signed by another key, for another custody or
    /// another department): mostly a spare wallet, sometimes another department's wallet or a role holder (refused).
    /// Accepted exactly when governance proposes a wallet that holds no role and no other department, with its proof.
    function proposeWallet(uint256 deptSeed, uint256 walletSeed, uint256 authSeed) external {
        uint16 dept = uint16(1 + deptSeed % DEPARTMENTS);
        uint256 w = walletSeed % 16;
        address wallet = w < 12 ? spareWallets[w % DEPARTMENTS] : w < 14 ? deptWallets[w % DEPARTMENTS]
            : w == 14 ? operator : admin;
        IApprovalRegistry.Custody custody = IApprovalRegistry.Custody(walletSeed >> 8 & 1);
        uint256 wrongProof = (walletSeed >> 9) % 8 == 7 ? 1 + (walletSeed >> 12) % 3 : 0;
        bytes memory proof = _keyProof(deptCodes[dept - 1], wallet, custody, wrongProof);
        address actor = _governanceActor(authSeed);
        bool expected = actor == governance && wrongProof == 0 && _canBecomeWalletOf(dept, wallet);
        vm.prank(actor);
        bool ok;
        try registry.proposeDepartmentWallet(deptCodes[dept - 1], wallet, custody, proof) {
            ok = true;
        } catch {}
        ghostCalls++;
        if (ok != expected) {
            _violate(
                V_WALLET,
                ok
                    ? (actor != governance ? "a wallet was proposed by someone other than governance"
                        : wrongProof != 0 ? "a wallet was proposed without its key proof"
                        : "a role holder or another department's wallet was proposed")
                    : "governance could not propose a free wallet with its key proof"
            );
        }
        if (ok) {
            ghostPendingWallet[dept] = wallet;
            ghostPendingAt[dept] = block.timestamp;
            ghostPendingCustody[dept] = custody;
            ghostPendingConsented[dept] = false;
            if (_booted) ghostFuzzSuccesses++;
        }
    }

    /// @notice The department's current wallet (or a stranger, refused) cancels its pending wallet change.
    function cancelWallet(uint256 deptSeed, bool asStranger) external {
        uint16 dept = uint16(1 + deptSeed % DEPARTMENTS);
        address actor = asStranger ? stranger : ghostWalletOf[dept];
        bool expected = !asStranger && ghostPendingWallet[dept] != address(0);
        vm.prank(actor);
        bool ok;
        try registry.cancelDepartmentWallet(deptCodes[dept - 1]) {ok = true;} catch {}
        ghostCalls++;
        if (ok != expected) {
            _violate(V_WALLET, ok ? "a stranger cancelled a wallet change, or one nobody proposed"
                : "the department's wallet could not cancel its pending change");
        }
        if (ok) _clearPending(dept);
    }

    /// @notice The department's current wallet (or, 1 time in 4, someone else: refused) consents to its pending
    /// wallet change.
    function consentWallet(uint256 deptSeed, uint256 actorSeed) external {
        uint16 dept = uint16(1 + deptSeed % DEPARTMENTS);
        address actor = ghostWalletOf[dept];
        if (actorSeed % 4 == 0) {
            address pending = ghostPendingWallet[dept];
            address[4] memory others = [stranger, governance, admin, pending == address(0) ? operator : pending];
            actor = others[(actorSeed >> 2) % 4];
        }
        bool expected = actor == ghostWalletOf[dept] && ghostPendingWallet[dept] != address(0);
        vm.prank(actor);
        bool ok;
        try registry.consentDepartmentWallet(deptCodes[dept - 1]) {ok = true;} catch {}
        ghostCalls++;
        if (ok != expected) {
            _violate(V_WALLET, ok ? "someone other than the current wallet consented to a wallet change"
                : "the current wallet could not consent to its pending change");
        }
        if (ok) {
            ghostPendingConsented[dept] = true;
            if (_booted) ghostFuzzSuccesses++;
        }
    }

    /// @notice Anyone activates a department's pending wallet change, after letting time pass: 0, up to 2 days, or
    /// to one second before / at the change's due time. It takes effect exactly when it was proposed, is due (or
    /// consented by the current wallet of a department that holds its own key) and the wallet is still free.
    function activateWallet(uint256 deptSeed, uint256 dtSeed) external {
        uint16 dept = uint16(1 + deptSeed % DEPARTMENTS);
        uint256 mode = dtSeed % 4;
        uint256 target = block.timestamp;
        uint256 due = ghostPendingAt[dept] + WALLET_DELAY;
        if (mode == 1) target += (dtSeed >> 2) % 2 days;
        else if (mode >= 2 && ghostPendingWallet[dept] != address(0) && due > block.timestamp) target = due - (mode & 1);
        if (target > block.timestamp) vm.warp(target);
        address wallet = ghostPendingWallet[dept];
        bool isDue = block.timestamp >= due;
        bool waived = ghostPendingConsented[dept] && ghostCustodyOf[dept] == IApprovalRegistry.Custody.DepartmentHeld;
        bool expected = wallet != address(0) && (isDue || waived) && _canBecomeWalletOf(dept, wallet);
        Snap memory before = _snapshot();
        vm.prank(stranger);
        bool ok;
        try registry.activateDepartmentWallet(deptCodes[dept - 1]) {ok = true;} catch {}
        if (ok != expected) {
            _violate(
                V_WALLET,
                !ok ? "a due (or consented) wallet change could not be activated"
                    : wallet == address(0) ? "a wallet change nobody proposed was activated"
                    : !(isDue || waived) ? "a wallet change was activated before its delay without the department's consent"
                    : "a wallet change to a wallet in use or holding a role was activated"
            );
        }
        if (ok && wallet != address(0)) {
            address previous = ghostWalletOf[dept];
            if (wallet != previous) {
                delete ghostDeptOf[previous];
                ghostFormerDeptOf[previous] = dept;
                ghostDeptOf[wallet] = dept;
                ghostWalletOf[dept] = wallet;
                ghostProposedAt[wallet] = ghostPendingAt[dept];
                ghostWaived[wallet] = !isDue;
                ghostWalletsRotated++;
            }
            if (!isDue) ghostDelaysWaived++;
            ghostCustodyOf[dept] = ghostPendingCustody[dept];
            _clearPending(dept);
            if (registry.departmentRecord(dept).wallet != ghostWalletOf[dept]) {
                _violate(V_WALLET, "the department's wallet differs from the one activated");
            }
        }
        _after(before, Ctx(0, K_WALLET, ok, 0, 0, 0, 0, 0));
    }

    /// @notice Anyone but the approval registry (the handler itself and governance hold DEFAULT_ADMIN_ROLE on all three
    /// contracts) tries to drive a licence or its documents, to rewire the contracts, or to give a department wallet
    /// a role on any of the three contracts: every attempt must revert.
    function tryDriveLifecycle(uint256 tokenSeed, uint256 actorSeed, uint256 kindSeed) external {
        uint256 n = _ids.length;
        if (n == 0) return;
        uint256 id = _ids[tokenSeed % n];
        address[7] memory callers = [address(this), governance, admin, operator, keeper, stranger, ghostWalletOf[1]];
        address caller = callers[actorSeed % 7];
        uint256 k = kindSeed % 8;
        bytes32[4] memory roles = [bytes32(0), ADMIN_ROLE, OPERATOR_ROLE, KEEPER_ROLE];
        address wallet = ghostWalletOf[uint16(1 + (kindSeed >> 3) % DEPARTMENTS)];
        bytes32 role = roles[(kindSeed >> 6) % 4];
        bool ok;
        if (caller != address(this)) vm.prank(caller);
        if (k == 0) {
            try token.transition(id, ILicenceToken.Status(1 + (kindSeed >> 3) % 8), 0) {ok = true;} catch {}
        } else if (k == 1) {
            try token.issue(id, 0) {ok = true;} catch {}
        } else if (k == 2) {
            try token.setActiveWorkflow(TYPE_A, uint32(kindSeed >> 3)) {ok = true;} catch {}
        } else if (k == 3) {
            try documents.setPhase(id, IDocumentRegistry.Phase((kindSeed >> 3) % 4)) {ok = true;} catch {}
        } else if (k == 4) {
            try token.setApprovalRegistry(caller) {ok = true;} catch {}
        } else if (k == 5) {
            try documents.setReviewRegistry(caller) {ok = true;} catch {}
        } else if (k == 6) {
            try registry.grantRole(role, wallet) {ok = true;} catch {}
        } else if ((kindSeed >> 8) % 2 == 0) {
            try token.grantRole(role, wallet) {ok = true;} catch {}
        } else {
            try documents.grantRole(role, wallet) {ok = true;} catch {}
        }
        ghostCalls++;
        ghostLifecycleAttempts++;
        if (ok) {
            _violate(V_LIFECYCLE, string.concat("lifecycle or wiring call ", k.u(), " succeeded on token ", id.u()));
        }
    }

    // =================================================================================================
    // Reads for the invariant tests
    // =================================================================================================

    function ids() external view returns (uint256[] memory) {
        return _ids;
    }

    function logOf(uint256 id) external view returns (Ev[] memory) {
        return _log[id];
    }

    function versionsOf(uint256 id) external view returns (uint16[] memory) {
        return _versions[id];
    }

    function stagesOf(uint32 workflowId) public view returns (GStage[] memory stages) {
        stages = new GStage[](ghostStageCount[workflowId]);
        for (uint256 s = 0; s < stages.length; ++s) stages[s] = _ghostStages[workflowId][s];
    }

    function applicantCount() external pure returns (uint256) {
        return 3;
    }

    function heldCount() external view returns (uint256) {
        return _held.length;
    }

    /// @notice The latest hash of each document of request `id`, by document index.
    function latestHashesOf(uint256 id) external view returns (bytes32[] memory) {
        return _latestHash[id];
    }

    // =================================================================================================
    // Actions (internal: also used by the bootstrap)
    // =================================================================================================

    function _mint(uint256 id, address owner, bytes32 requestType, address actor) internal {
        Snap memory before = _snapshot();
        bool exists = ghostOwner[id] != address(0);
        bool ok;
        vm.prank(actor);
        try token.mint(owner, id, requestType, keccak256(abi.encode("applicant", owner, id))) {ok = true;} catch {}
        _log[id].push(_ev(K_MINT, ok, actor == operator, 0, 0, 0, 0));
        if (ok && !exists) {
            _ids.push(id);
            ghostOwner[id] = owner;
            ghostBalance[owner] += 1;
            ghostWorkflowOf[id] = ghostActive[requestType];
            if (token.licence(id).workflowId != ghostActive[requestType]) {
                _violate(V_WIRING, string.concat("token ", id.u(), " not pinned to the active workflow"));
            }
        }
        _after(before, Ctx(id, K_MINT, ok, 0, 0, 0, 0, 0));
    }

    function _anchorDocument(uint256 id, address actor) internal {
        Snap memory before = _snapshot();
        uint8 stageBefore = registry.progressOf(id).stage;
        bytes32 hash = keccak256(abi.encode("document", ++_nonce));
        bool ok;
        uint8 docIndex;
        vm.prank(actor);
        try documents.anchorDocument(id, bytes16(uint128(_nonce)), "DOC", hash) returns (uint8 index) {
            ok = true;
            docIndex = index;
        } catch {}
        _log[id].push(_ev(K_DOC_ADD, ok, actor == operator, 0, 0, 0, 0));
        if (ok) {
            if (docIndex != _versions[id].length) _violate(V_WIRING, "anchorDocument returned a wrong index");
            _versions[id].push(1);
            _latestHash[id].push(hash);
        }
        _after(before, Ctx(id, K_DOC_ADD, ok, 0, 0, 0, stageBefore, 0));
    }

    function _anchorVersion(uint256 id, uint8 docIndex, address actor) internal {
        Snap memory before = _snapshot();
        bytes32 hash = keccak256(abi.encode("document", ++_nonce));
        bool ok;
        uint16 version;
        vm.prank(actor);
        try documents.anchorVersion(id, _latestHash[id][docIndex], hash) returns (uint16 v) {
            ok = true;
            version = v;
        } catch {}
        _log[id].push(_ev(K_DOC_VERSION, ok, actor == operator, docIndex, 0, 0, 0));
        if (ok) {
            if (version != _versions[id][docIndex] + 1) _violate(V_WIRING, "anchorVersion returned a wrong version");
            _versions[id][docIndex] += 1;
            _latestHash[id][docIndex] = hash;
        }
        _after(before, Ctx(id, K_DOC_VERSION, ok, 0, 0, 0, 0, docIndex));
    }

    /// @dev submit, resubmit, cancel, enforceTimeout, resolveEscalation, suspend, reinstate, revoke.
    function _simple(uint256 id, uint8 kind, uint8 a, uint8 reason, address actor) internal {
        Snap memory before = _snapshot();
        uint8 statusBefore = uint8(token.licence(id).status);
        bool ok;
        address proper = kind == K_TIMEOUT ? keeper : kind == K_RESOLVE || kind >= K_SUSPEND ? admin : operator;
        vm.prank(actor);
        if (kind == K_SUBMIT) {
            try registry.submit(id) {ok = true;} catch {}
        } else if (kind == K_RESUBMIT) {
            try registry.resubmit(id) {ok = true;} catch {}
        } else if (kind == K_CANCEL) {
            try registry.cancel(id, reason) {ok = true;} catch {}
        } else if (kind == K_TIMEOUT) {
            try registry.enforceTimeout(id) {ok = true;} catch {}
            if (ok) ghostTimeouts++;
        } else if (kind == K_RESOLVE) {
            try registry.resolveEscalation(id, a == 1, reason) {ok = true;} catch {}
        } else if (kind == K_SUSPEND) {
            try token.suspend(id, reason) {ok = true;} catch {}
        } else if (kind == K_REINSTATE) {
            try token.reinstate(id) {ok = true;} catch {}
        } else {
            try token.revoke(id, reason) {ok = true;} catch {}
        }
        _log[id].push(_ev(kind, ok, actor == proper, a, reason, 0, 0));
        if (ok && kind == K_TIMEOUT && registry.progressOf(id).phase == IApprovalRegistry.Phase.Escalated) {
            ghostEscalations++;
        }
        if (ok && statusBefore != S_APPROVED && uint8(token.licence(id).status) == S_APPROVED && kind != K_REINSTATE)
        {
            _violate(V_DECISION, string.concat("token ", id.u(), " became Approved without a department decision"));
        }
        _after(before, Ctx(id, kind, ok, 0, 0, 0, 0, 0));
    }

    /// @dev A decision as its department would make it now: the department's next nonce (as the handler counts it),
    /// the current stage and round, the latest hashes of the documents in `mask` and a deadline within the lifetime.
    /// `how`: bit 0 relays a signature instead of sending from the wallet; bits 1-4 >= 10 get one field wrong
    /// (nonce, stage, round, documents, a passed deadline, a deadline too far ahead); the rest picks the deadline,
    /// the relayer and the department an outsider claims to be.
    function _decide(uint256 id, address actor, uint8 decision, uint8 reason, uint16 mask, uint256 how) internal {
        IApprovalRegistry.Decision memory d =
            _fresh(id, _claimedDepartment(actor, how >> 40), decision, reason, mask, how >> 8);
        uint256 wrong = (how >> 1) % 16;
        if (wrong >= 10) _corrupt(d, wrong - 10, how >> 64);
        bytes memory signature;
        if (how & 1 == 1) signature = Typed.sign(vm, _signingKey(actor), Typed.decisionDigest(separator, d));
        _submit(d, actor, signature, _relayer(how >> 24));
    }

    function _fresh(uint256 id, uint16 dept, uint8 decision, uint8 reason, uint16 mask, uint256 deadlineSeed)
        internal
        view
        returns (IApprovalRegistry.Decision memory d)
    {
        IApprovalRegistry.Progress memory progress = registry.progressOf(id);
        uint256 m = deadlineSeed % 4;
        uint256 ahead = m == 0 ? 0 : m == 1 ? MAX_DECISION_LIFETIME : (deadlineSeed >> 2) % MAX_DECISION_LIFETIME;
        d = IApprovalRegistry.Decision({
            tokenId: id,
            departmentId: dept,
            stage: progress.stage,
            round: progress.stageStartedAt,
            decision: IApprovalRegistry.DecisionStatus(decision),
            reasonCode: reason,
            reviewedMask: mask,
            documents: _hashesFor(id, mask),
            remarksHash: keccak256("remarks"),
            nonce: ghostNonce[dept],
            deadline: uint64(block.timestamp + ahead)
        });
    }

    /// @dev One field made (most likely) wrong; _bound says afterwards whether it still binds.
    function _corrupt(IApprovalRegistry.Decision memory d, uint256 field, uint256 r) internal view {
        if (field == 0) {
            d.nonce = r % 2 == 0 && d.nonce > 0 ? d.nonce - 1 - uint64((r >> 1) % d.nonce) : d.nonce + 1 + uint64((r >> 1) % 3);
        } else if (field == 1) {
            d.stage = uint8((uint256(d.stage) + 1 + r % 255) % 256);
        } else if (field == 2) {
            if (r % 2 == 0 && d.round > 0) d.round -= uint40(1 + (r >> 1) % d.round);
            else d.round += uint40(1 + (r >> 1) % 1000);
        } else if (field == 3) {
            uint256 n = d.documents.length;
            if (n == 0 || r % 3 == 0) {
                bytes32[] memory longer = new bytes32[](n + 1);
                for (uint256 i = 0; i < n; ++i) longer[i] = d.documents[i];
                longer[n] = keccak256(abi.encode("not the latest", r));
                d.documents = longer;
            } else if (r % 3 == 1) {
                // Another anchored hash (an older version, another document or another request's), or none at all.
                d.documents[(r >> 2) % n] = _nonce > 0 ? keccak256(abi.encode("document", 1 + (r >> 8) % _nonce))
                    : bytes32(r);
            } else {
                bytes32[] memory shorter = new bytes32[](n - 1);
                for (uint256 i = 0; i + 1 < n; ++i) shorter[i] = d.documents[i];
                d.documents = shorter;
            }
        } else if (field == 4) {
            uint256 back = 1 + r % 1 days;
            d.deadline = block.timestamp > back ? uint64(block.timestamp - back) : 0;
        } else {
            d.deadline = uint64(block.timestamp + MAX_DECISION_LIFETIME + 1 + r % 1 days);
        }
    }

    /// @dev Sends `d` from `actor` (empty signature) or relays `actor`'s signature from `relayer`, then logs and checks.
    function _submit(IApprovalRegistry.Decision memory d, address actor, bytes memory signature, address relayer)
        internal
    {
        uint256 id = d.tokenId;
        Snap memory before = _snapshot();
        IApprovalRegistry.Progress memory progress = registry.progressOf(id);
        uint8 statusBefore = uint8(token.licence(id).status);
        bool bound = _bound(d, progress);
        // The department that decided: the one the decision names, when `actor` is its current wallet.
        uint16 dept = d.departmentId >= 1 && d.departmentId <= DEPARTMENTS && ghostWalletOf[d.departmentId] == actor
            ? d.departmentId
            : 0;
        bool bySig = signature.length != 0;
        bool ok;
        if (bySig) {
            vm.prank(relayer);
            try registry.decideBySig(d, signature) {ok = true;} catch {}
        } else {
            vm.prank(actor);
            try registry.decide(d) {ok = true;} catch {}
        }
        // Spec: an empty review list covers every document of the request.
        uint16 mask = d.reviewedMask == 0 ? uint16((1 << _versions[id].length) - 1) : d.reviewedMask;
        uint8 decision = uint8(d.decision);
        if (ok) _checkDecider(id, actor);
        _log[id].push(_ev(K_DECIDE, ok, bound, decision, d.reasonCode, progress.stage, dept));
        _log[id][_log[id].length - 1].mask = mask;
        if (ok) {
            ghostDecisionsOk++;
            if (bySig) ghostSignedDecisionsOk++;
            if (dept == 0) {
                _violate(V_DECISION, string.concat("a non-department wallet decided on token ", id.u()));
            } else {
                // Every recorded decision consumes its department's nonce, whichever the route.
                ghostNonce[dept] += 1;
                if (registry.departmentRecord(dept).nonce != ghostNonce[dept]) {
                    _violate(V_NONCE, string.concat("a decision on token ", id.u(), " did not consume exactly one nonce"));
                }
            }
            if (!bound) {
                _violate(V_NONCE, string.concat("token ", id.u(), ": a decision with a wrong nonce, stage, round, document or deadline was recorded"));
            }
            if (statusBefore != S_APPROVED && uint8(token.licence(id).status) == S_APPROVED) {
                ghostIssued++;
                if (_booted) ghostIssuedByFuzz++;
            }
            if (decision == D_REJECTED && registry.progressOf(id).phase == IApprovalRegistry.Phase.Escalated) {
                ghostEscalations++;
            }
        } else {
            ghostDecisionsRefused++;
            if (!bound) ghostUnboundRefused++;
        }
        _after(before, Ctx(id, K_DECIDE, ok, dept, decision, mask, progress.stage, 0));
    }

    /// @dev Whether `d` names the department's next nonce, the current stage and round, the latest hash of each
    /// document it covers (in ascending index order, no more, no fewer) and a deadline within the lifetime.
    function _bound(IApprovalRegistry.Decision memory d, IApprovalRegistry.Progress memory progress)
        internal
        view
        returns (bool)
    {
        return d.nonce == ghostNonce[d.departmentId] && d.stage == progress.stage && d.round == progress.stageStartedAt
            && block.timestamp <= d.deadline && d.deadline <= block.timestamp + MAX_DECISION_LIFETIME
            && _latestDocuments(d.tokenId, d.reviewedMask, d.documents);
    }

    function _latestDocuments(uint256 id, uint16 mask, bytes32[] memory hashes) internal view returns (bool) {
        uint256 count = _versions[id].length;
        uint256 covered = mask == 0 ? (1 << count) - 1 : mask & ((1 << count) - 1);
        uint256 k;
        for (uint256 i = 0; i < count; ++i) {
            if ((covered >> i) & 1 == 0) continue;
            if (k == hashes.length || hashes[k] != _latestHash[id][i]) return false;
            ++k;
        }
        return k == hashes.length;
    }

    /// @dev The latest hashes of the documents `mask` covers (every document when 0), by ascending index.
    function _hashesFor(uint256 id, uint16 mask) internal view returns (bytes32[] memory hashes) {
        uint256 count = _versions[id].length;
        uint256 covered = mask == 0 ? (1 << count) - 1 : mask & ((1 << count) - 1);
        uint256 n;
        for (uint256 bits = covered; bits != 0; bits &= bits - 1) ++n;
        hashes = new bytes32[](n);
        uint256 k;
        for (uint256 i = 0; i < count; ++i) {
            if ((covered >> i) & 1 == 1) hashes[k++] = _latestHash[id][i];
        }
    }

    /// @dev The department `actor` decides for: its own, the one it was proposed for or used to decide for, or
    /// (an outsider) any department.
    function _claimedDepartment(address actor, uint256 seed) internal view returns (uint16) {
        if (ghostDeptOf[actor] != 0) return ghostDeptOf[actor];
        for (uint16 d = 1; d <= DEPARTMENTS; ++d) {
            if (ghostPendingWallet[d] == actor) return d;
        }
        if (ghostFormerDeptOf[actor] != 0) return ghostFormerDeptOf[actor];
        return uint16(1 + seed % DEPARTMENTS);
    }

    /// @dev The key `actor` signs with (an address the handler has no key for: the stranger's).
    function _signingKey(address actor) internal view returns (uint256) {
        uint256 key = keyFor[actor];
        return key == 0 ? strangerKey : key;
    }

    /// @dev Anyone may relay a signed decision.
    function _relayer(uint256 seed) internal view returns (address) {
        address[6] memory relayers = [stranger, operator, admin, keeper, applicants[0], deptWallets[(seed >> 3) % DEPARTMENTS]];
        return relayers[seed % 6];
    }

    /// @dev `wallet`'s signature of DepartmentKey(code, wallet, custody); `wrong` 1: by another key, 2: for the other
    /// custody, 3: for another department's code.
    function _keyProof(bytes32 code, address wallet, IApprovalRegistry.Custody custody, uint256 wrong)
        internal
        view
        returns (bytes memory)
    {
        uint256 key = wrong == 1 ? strangerKey : _signingKey(wallet);
        uint8 signedCustody = wrong == 2 ? 1 - uint8(custody) : uint8(custody);
        bytes32 signedCode = wrong == 3 ? keccak256(abi.encode("another department", code)) : code;
        return Typed.sign(vm, key, Typed.keyDigest(separator, signedCode, wallet, signedCustody));
    }

    /// @dev A department wallet holds no role and is no other department's (keeping its own wallet is a custody change).
    function _canBecomeWalletOf(uint16 dept, address wallet) internal view returns (bool) {
        if (wallet == ghostWalletOf[dept]) return true;
        return wallet != address(0) && ghostDeptOf[wallet] == 0 && !_holdsRole(wallet);
    }

    function _holdsRole(address account) internal view returns (bool) {
        return account == address(this) || account == governance || account == admin || account == operator
            || account == keeper;
    }

    /// @dev Governance, except 1 time in 16 the administrator (ADMIN_ROLE) and 1 time in 16 a stranger: refused.
    function _governanceActor(uint256 seed) internal view returns (address) {
        uint256 r = seed % 16;
        return r == 0 ? stranger : r == 15 ? admin : governance;
    }

    function _clearPending(uint16 dept) internal {
        delete ghostPendingWallet[dept];
        delete ghostPendingAt[dept];
        delete ghostPendingCustody[dept];
        delete ghostPendingConsented[dept];
    }

    function _registerRandomWorkflow(uint256 seed, address actor) internal {
        bytes32 requestType = seed & 1 == 0 ? TYPE_A : TYPE_B;
        uint256 stageCount = 1 + (seed >> 1) % 3;
        IApprovalRegistry.StageInput[] memory inputs = new IApprovalRegistry.StageInput[](stageCount);
        GStage[] memory shapes = new GStage[](stageCount);
        for (uint256 s = 0; s < stageCount; ++s) {
            uint256 r = uint256(keccak256(abi.encode(seed, s)));
            uint256 n = 1 + r % 4;
            uint8[] memory picked = _pickDepartments(r >> 3, n);
            uint8 completion = uint8((r >> 20) % 3);
            uint8 mandatory = (r >> 22) % 3 == 0 ? uint8((r >> 24) & ((1 << n) - 1)) : 0;
            uint8 onTimeout = uint8((r >> 32) % 4);
            uint32 timeout = onTimeout == T_NONE ? 0 : uint32(1 hours + (r >> 34) % 1 days);
            (inputs[s], shapes[s]) = _stage(
                uint8((r >> 40) % 2),
                completion,
                completion == C_THRESHOLD ? uint8(1 + (r >> 42) % n) : 0,
                onTimeout,
                uint8((r >> 46) % 3),
                timeout,
                mandatory,
                picked
            );
        }
        bool valid = true;
        if ((seed >> 8) % 8 == 0) {
            // Deliberately invalid shape: the registry must refuse it.
            valid = false;
            uint256 s = (seed >> 12) % stageCount;
            uint256 corruption = (seed >> 16) % 6;
            uint256 n = inputs[s].departments.length;
            if (corruption == 0) {
                inputs[s].completion = IApprovalRegistry.Completion.Threshold;
                inputs[s].threshold = (seed >> 20) % 2 == 0 ? 0 : uint8(n + 1);
            } else if (corruption == 1) {
                inputs[s].completion = (seed >> 20) % 2 == 0
                    ? IApprovalRegistry.Completion.All
                    : IApprovalRegistry.Completion.Any;
                inputs[s].threshold = 1;
            } else if (corruption == 2) {
                inputs[s].mandatoryMask |= uint8(1 << n);
            } else if (corruption == 3) {
                if (inputs[s].timeoutSeconds == 0) inputs[s].timeoutSeconds = 60;
                else inputs[s].onTimeout = IApprovalRegistry.TimeoutAction.None;
            } else if (corruption == 4) {
                bytes32[] memory twice = new bytes32[](n + 1);
                for (uint256 i = 0; i < n; ++i) twice[i] = inputs[s].departments[i];
                twice[n] = inputs[s].departments[0];
                inputs[s].departments = twice;
            } else {
                inputs[s].departments = new bytes32[](0);
            }
        }
        _registerWorkflow(requestType, inputs, shapes, valid, actor);
    }

    function _registerWorkflow(
        bytes32 requestType,
        IApprovalRegistry.StageInput[] memory inputs,
        GStage[] memory shapes,
        bool valid,
        address actor
    ) internal {
        Snap memory before = _snapshot();
        bool ok;
        uint32 workflowId;
        vm.prank(actor);
        try registry.registerWorkflow(requestType, keccak256(abi.encode(inputs)), VALIDITY, inputs) returns (
            uint32 id
        ) {
            ok = true;
            workflowId = id;
        } catch {}
        ghostCalls++;
        bool expected = valid && actor == governance;
        if (ok != expected) {
            _violate(
                V_WIRING,
                ok ? "registerWorkflow accepted an invalid shape or caller" : "registerWorkflow refused a valid shape"
            );
        }
        if (ok) {
            ghostWorkflowsOk++;
            if (workflowId != ++ghostWorkflowCount) _violate(V_WIRING, "unexpected workflow id");
            ghostValidity[workflowId] = VALIDITY;
            ghostStageCount[workflowId] = uint8(shapes.length);
            for (uint256 s = 0; s < shapes.length; ++s) _ghostStages[workflowId][s] = shapes[s];
            ghostActive[requestType] = workflowId;
            if (token.activeWorkflowOf(requestType) != workflowId) {
                _violate(V_WIRING, "token not told about the new active workflow");
            }
        }
        _after(before, Ctx(0, K_REGISTER_WORKFLOW, ok, 0, 0, 0, 0, 0));
    }

    // =================================================================================================
    // Checks around every action
    // =================================================================================================

    function _snapshot() internal view returns (Snap memory snap) {
        uint256 n = _ids.length;
        snap.n = n;
        snap.stage = new uint8[](n);
        snap.docPhase = new uint8[](n);
        snap.st = new uint8[](n * G_MAX_STAGES * G_MAX_POSITIONS);
        snap.mk = new uint16[](n * G_MAX_STAGES * G_MAX_POSITIONS);
        for (uint256 i = 0; i < n; ++i) {
            uint256 id = _ids[i];
            snap.stage[i] = registry.progressOf(id).stage;
            snap.docPhase[i] = uint8(documents.packedDocumentsOf(id));
            uint256 stageCount = ghostStageCount[ghostWorkflowOf[id]];
            for (uint256 s = 0; s < stageCount; ++s) {
                (, IApprovalRegistry.DecisionStatus[] memory statuses, uint16[] memory masks) =
                    registry.decisionsOf(id, uint8(s));
                for (uint256 p = 0; p < statuses.length && p < G_MAX_POSITIONS; ++p) {
                    uint256 at = (i * G_MAX_STAGES + s) * G_MAX_POSITIONS + p;
                    snap.st[at] = uint8(statuses[p]);
                    snap.mk[at] = masks[p];
                }
            }
        }
    }

    function _after(Snap memory before, Ctx memory ctx) internal {
        ghostCalls++;
        if (ctx.ok && _booted) ghostFuzzSuccesses++;
        Snap memory after_ = _snapshot();
        for (uint256 i = 0; i < before.n; ++i) {
            uint256 id = _ids[i];
            _checkStage(id, before.stage[i], after_.stage[i], ctx);
            for (uint256 s = 0; s < G_MAX_STAGES; ++s) {
                for (uint256 p = 0; p < G_MAX_POSITIONS; ++p) {
                    uint256 at = (i * G_MAX_STAGES + s) * G_MAX_POSITIONS + p;
                    _checkDecision(
                        Change(id, uint8(s), p, before.st[at], after_.st[at], before.mk[at], after_.mk[at], before.docPhase[i]),
                        ctx
                    );
                }
            }
        }
    }

    /// @dev A stage only moves forward on a department's approval and only moves back on a document update.
    function _checkStage(uint256 id, uint8 stageBefore, uint8 stageAfter, Ctx memory ctx) internal {
        if (stageAfter < stageBefore) {
            if (ctx.ok && (ctx.kind == K_DOC_VERSION || ctx.kind == K_DOC_ADD) && ctx.id == id) {
                ghostReopens++;
            } else {
                _violate(
                    V_STAGE,
                    string.concat(
                        "stage of token ", id.u(), " went back ", uint256(stageBefore).u(), "->",
                        uint256(stageAfter).u(), " on ", kindName(ctx.kind), ctx.ok ? " (succeeded)" : " (reverted)",
                        " of token ", ctx.id.u()
                    )
                );
            }
        } else if (stageAfter > stageBefore) {
            if (ctx.ok && ctx.kind == K_DECIDE && ctx.decision == D_APPROVED && ctx.id == id && ctx.dept != 0) {
                ghostStageAdvances++;
            } else {
                _violate(
                    V_STAGE,
                    string.concat(
                        "stage of token ", id.u(), " advanced without an approval, on ", kindName(ctx.kind)
                    )
                );
            }
        }
    }

    /// @dev Who may change a decision, and how:
    /// - to Approved / Rejected / ChangesRequested: only that position's department wallet, by a successful
    ///   decision of that kind in the current stage (with the mask it sent);
    /// - Approved -> ReviewRequired (mask kept): only a document update, and then exactly for the approvals
    ///   that reviewed the updated document;
    /// - back to Pending (mask cleared): ChangesRequested on resubmission or document update, Rejected on an
    ///   escalation sent back, or the whole stage on a RetryStage rejection.
    struct Change {
        uint256 id;
        uint8 s;
        uint256 p;
        uint8 b; // status before
        uint8 a; // status after
        uint16 bm; // mask before
        uint16 am; // mask after
        uint8 docPhaseBefore;
    }

    function _checkDecision(Change memory c, Ctx memory ctx) internal {
        bool updateOfThisToken = ctx.ok && (ctx.kind == K_DOC_VERSION || ctx.kind == K_DOC_ADD) && ctx.id == c.id;
        if (updateOfThisToken && c.b == D_APPROVED && c.docPhaseBefore == DOC_REVIEW) {
            // A document added under review was seen by no one: every approval of every stage must be given again.
            // A new version: exactly the approvals that reviewed the document.
            bool reviewed = ctx.kind == K_DOC_ADD || (c.bm >> ctx.docIndex) & 1 == 1;
            if (reviewed) ghostInvalidated++;
            if (reviewed && (c.a != D_REVIEW_REQUIRED || c.am != c.bm)) {
                _violate(
                    V_INVALIDATION,
                    _where(
                        ctx.kind == K_DOC_ADD ? "approval survived a document added under review"
                            : "approval that reviewed the updated document not ReviewRequired",
                        c
                    )
                );
            }
            if (!reviewed && (c.a != D_APPROVED || c.am != c.bm)) {
                _violate(V_INVALIDATION, _where("approval that did not review the updated document changed", c));
            }
        }
        if (c.a == c.b && c.am == c.bm) return;
        if (ctx.id != c.id || !ctx.ok) {
            _violate(V_DECISION, _where("decision changed by an action on another token or a failed call", c));
            return;
        }
        if (!_changeAllowed(c, ctx)) {
            _violate(
                V_DECISION,
                string.concat(
                    _where("forbidden decision change", c), " ", decisionName(c.b), "->", decisionName(c.a), " on ",
                    kindName(ctx.kind), " by department ", uint256(ctx.dept).u()
                )
            );
        }
    }

    function _changeAllowed(Change memory c, Ctx memory ctx) internal view returns (bool) {
        if (c.a == D_APPROVED || c.a == D_REJECTED || c.a == D_CHANGES) {
            return ctx.kind == K_DECIDE && ctx.dept != 0 && c.a == ctx.decision && c.s == ctx.stageBefore
                && _ghostDeptAt(c.id, c.s, c.p) == ctx.dept && c.am == ctx.mask;
        }
        if (c.a == D_REVIEW_REQUIRED) {
            return (ctx.kind == K_DOC_VERSION || ctx.kind == K_DOC_ADD) && c.b == D_APPROVED && c.am == c.bm;
        }
        // Back to Pending, mask cleared.
        if (c.am != 0) return false;
        bool retry = ctx.kind == K_DECIDE && ctx.decision == D_REJECTED && ctx.dept != 0 && c.s == ctx.stageBefore
            && _ghostStages[ghostWorkflowOf[c.id]][c.s].onRejection == R_RETRY;
        return retry || (c.b == D_CHANGES && (ctx.kind == K_RESUBMIT || ctx.kind == K_DOC_VERSION || ctx.kind == K_DOC_ADD))
            || (c.b == D_REJECTED && ctx.kind == K_RESOLVE);
    }

    /// @dev A successful decision came from `actor`: it must be the current wallet of a department as the handler
    /// saw it registered or activated, and if it was proposed, the proposal is at least WALLET_DELAY old.
    function _checkDecider(uint256 id, address actor) internal {
        uint16 dept = ghostDeptOf[actor];
        if (dept == 0 || ghostWalletOf[dept] != actor) {
            _violate(V_WALLET, string.concat("token ", id.u(), ": a wallet that is no department's decided"));
            return;
        }
        uint256 proposedAt = ghostProposedAt[actor];
        if (proposedAt != 0) {
            ghostDecisionsByRotatedWallets++;
            // Only the consent of a department-held predecessor waives the delay (checked at activation).
            if (block.timestamp < proposedAt + WALLET_DELAY && !ghostWaived[actor]) {
                _violate(V_WALLET, string.concat("token ", id.u(), ": a wallet decided before its delay was over"));
            }
        }
    }

    function _where(string memory what, Change memory c) internal pure returns (string memory) {
        return string.concat(what, " (token ", c.id.u(), " stage ", uint256(c.s).u(), " position ", c.p.u(), ")");
    }

    function _violate(uint8 category, string memory why) internal {
        violations[category] += 1;
        if (bytes(firstViolation[category]).length == 0) firstViolation[category] = why;
    }

    // =================================================================================================
    // Input selection
    // =================================================================================================

    function _bit(uint8 status) internal pure returns (uint256) {
        return 1 << status;
    }

    /// @dev A token, 3 times in 4 one whose status is in `statusMask` (half of those: the lowest such id, so that
    /// one request at a time gets pushed through its workflow), otherwise any token. 0 when none is minted.
    function _pick(uint256 seed, uint256 statusMask) internal view returns (uint256) {
        uint256 n = _ids.length;
        if (n == 0) return 0;
        uint256 mode = seed % 4;
        uint256 start = mode == 0 ? 0 : (seed >> 2) % n;
        if (mode != 3) {
            for (uint256 k = 0; k < n; ++k) {
                uint256 id = _ids[(start + k) % n];
                if ((statusMask >> uint8(token.licence(id).status)) & 1 == 1) return id;
            }
        }
        return _ids[(seed >> 2) % n];
    }

    function _pickEscalated(uint256 seed) internal view returns (uint256) {
        uint256 n = _ids.length;
        if (n == 0) return 0;
        uint256 start = (seed >> 1) % n;
        if (seed % 4 != 0) {
            for (uint256 k = 0; k < n; ++k) {
                uint256 id = _ids[(start + k) % n];
                if (registry.progressOf(id).phase == IApprovalRegistry.Phase.Escalated) return id;
            }
        }
        return _ids[start];
    }

    /// @dev The proper role holder, except 1 time in 16: a stranger (must be refused).
    function _roleActor(uint256 seed, address proper) internal view returns (address) {
        return seed % 16 == 0 ? stranger : proper;
    }

    /// @dev Out of 16: `biasToTurn` times a department that can decide now (from pendingDepartmentsOf, used only
    /// to steer the fuzzer), then mostly any department wallet, sometimes a non-department actor.
    function _decider(uint256 id, uint256 seed, uint256 biasToTurn) internal view returns (address) {
        uint256 r = seed % 16;
        if (r < biasToTurn) {
            uint16[] memory pending = registry.pendingDepartmentsOf(id);
            if (pending.length != 0) {
                uint16 dept = pending[(seed >> 4) % pending.length];
                if (dept >= 1 && dept <= DEPARTMENTS) return ghostWalletOf[dept];
            }
        }
        if (r < 15) {
            uint256 w = (seed >> 8) % (2 * DEPARTMENTS);
            return w < DEPARTMENTS ? deptWallets[w] : spareWallets[w - DEPARTMENTS];
        }
        address[5] memory others = [operator, admin, keeper, stranger, applicants[0]];
        uint256 o = (seed >> 8) % 6;
        return o < 5 ? others[o] : address(uint160(seed >> 16) | 1);
    }

    /// @dev Mostly every document (so that updates invalidate), sometimes a random subset, rarely garbage.
    function _mask(uint256 id, uint256 seed) internal view returns (uint16) {
        uint256 count = _versions[id].length;
        if (seed % 16 == 0) return uint16(seed >> 4);
        if (count == 0) return 0;
        uint256 all = (1 << count) - 1;
        return uint16(seed % 2 == 0 ? all : (seed >> 4) & all);
    }

    function _pickDepartments(uint256 r, uint256 n) internal pure returns (uint8[] memory picked) {
        uint8[6] memory order = [0, 1, 2, 3, 4, 5];
        for (uint256 i = 0; i < n; ++i) {
            uint256 j = i + (r >> (3 * i)) % (DEPARTMENTS - i);
            (order[i], order[j]) = (order[j], order[i]);
        }
        picked = new uint8[](n);
        for (uint256 i = 0; i < n; ++i) picked[i] = order[i];
    }

    function _stage(
        uint8 executionType,
        uint8 completion,
        uint8 threshold,
        uint8 onTimeout,
        uint8 onRejection,
        uint32 timeoutSeconds,
        uint8 mandatoryMask,
        uint8[] memory departmentIndexes
    ) internal view returns (IApprovalRegistry.StageInput memory input, GStage memory shape) {
        uint256 n = departmentIndexes.length;
        input.executionType = IApprovalRegistry.ExecutionType(executionType);
        input.completion = IApprovalRegistry.Completion(completion);
        input.threshold = threshold;
        input.onTimeout = IApprovalRegistry.TimeoutAction(onTimeout);
        input.onRejection = IApprovalRegistry.RejectionAction(onRejection);
        input.timeoutSeconds = timeoutSeconds;
        input.mandatoryMask = mandatoryMask;
        input.departments = new bytes32[](n);
        shape.executionType = executionType;
        shape.completion = completion;
        shape.threshold = threshold;
        shape.onTimeout = onTimeout;
        shape.onRejection = onRejection;
        shape.timeoutSeconds = timeoutSeconds;
        shape.mandatoryMask = completion == C_ALL ? uint8((1 << n) - 1) : mandatoryMask;
        shape.count = uint8(n);
        for (uint256 i = 0; i < n; ++i) {
            input.departments[i] = deptCodes[departmentIndexes[i]];
            shape.departments[i] = uint16(departmentIndexes[i]) + 1;
        }
    }

    function _ghostDeptAt(uint256 id, uint256 s, uint256 p) internal view returns (uint16) {
        return _ghostStages[ghostWorkflowOf[id]][s].departments[p];
    }

    function _ev(uint8 kind, bool ok, bool auth, uint8 a, uint8 reason, uint8 stage, uint16 dept)
        internal
        view
        returns (Ev memory)
    {
        return Ev(kind, ok, auth, a, reason, stage, dept, 0, uint40(block.timestamp));
    }

    // =================================================================================================
    // Bootstrap: a known starting point, so that every run starts with an issued licence (token 1), requests
    // part-way through their review (2: stage 1; 3: one-stage ANY; 5: stage 0, B's turn) and a draft (4).
    // The fuzzer then pushes them on, updates their documents, suspends, revokes, ...
    // =================================================================================================

    function _bootstrap() internal {
        // TYPE_A: stage 0 SEQUENTIAL ALL [A, B] (retry on rejection, notify after 1 day);
        //         stage 1 PARALLEL THRESHOLD 2 of [C, D, E], D mandatory (escalate on rejection and timeout).
        IApprovalRegistry.StageInput[] memory inputs = new IApprovalRegistry.StageInput[](2);
        GStage[] memory shapes = new GStage[](2);
        uint8[] memory ab = new uint8[](2);
        (ab[0], ab[1]) = (0, 1);
        uint8[] memory cde = new uint8[](3);
        (cde[0], cde[1], cde[2]) = (2, 3, 4);
        (inputs[0], shapes[0]) = _stage(EX_SEQUENTIAL, C_ALL, 0, T_NOTIFY, R_RETRY, 1 days, 0, ab);
        (inputs[1], shapes[1]) = _stage(EX_PARALLEL, C_THRESHOLD, 2, T_ESCALATE, R_ESCALATE, 12 hours, 2, cde);
        _registerWorkflow(TYPE_A, inputs, shapes, true, governance);

        // TYPE_B: one PARALLEL ANY stage of [E, F], rejected automatically after 1 day.
        inputs = new IApprovalRegistry.StageInput[](1);
        shapes = new GStage[](1);
        uint8[] memory ef = new uint8[](2);
        (ef[0], ef[1]) = (4, 5);
        (inputs[0], shapes[0]) = _stage(EX_PARALLEL, C_ANY, 0, T_AUTO_REJECT, R_FAIL, 1 days, 0, ef);
        _registerWorkflow(TYPE_B, inputs, shapes, true, governance);

        _mint(1, applicants[0], TYPE_A, operator);
        _mint(2, applicants[1], TYPE_A, operator);
        _mint(3, applicants[2], TYPE_B, operator);
        _mint(4, applicants[0], TYPE_A, operator);
        for (uint256 id = 1; id <= 4; ++id) {
            _anchorDocument(id, operator);
            _anchorDocument(id, operator);
        }
        for (uint256 id = 1; id <= 3; ++id) {
            _simple(id, K_SUBMIT, 0, 0, operator);
        }
        // Token 1 goes all the way: A, B (stage 0, in order), then D (mandatory) and E (threshold 2).
        _decide(1, deptWallets[0], D_APPROVED, 0, 1, 0);
        _decide(1, deptWallets[1], D_APPROVED, 0, 3, 0);
        _decide(1, deptWallets[3], D_APPROVED, 0, 2, 0);
        _decide(1, deptWallets[4], D_APPROVED, 0, 3, 0);
        require(uint8(token.licence(1).status) == S_APPROVED, "bootstrap: token 1 not approved");
        // Token 2 reaches stage 1: A reviewed document 0, B both documents (a new version of either reopens).
        _decide(2, deptWallets[0], D_APPROVED, 0, 1, 0);
        _decide(2, deptWallets[1], D_APPROVED, 0, 3, 0);
        // Token 5: submitted, A approved (reviewed document 1), B's turn.
        _mint(5, applicants[1], TYPE_A, operator);
        _anchorDocument(5, operator);
        _anchorDocument(5, operator);
        _simple(5, K_SUBMIT, 0, 0, operator);
        _decide(5, deptWallets[0], D_APPROVED, 0, 2, 0);
    }
}
