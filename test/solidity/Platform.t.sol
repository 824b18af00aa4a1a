// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {TestBase} from "./Vm.sol";
import "./PlatformHandler.sol";
import {StageLedger} from "../../contracts/libraries/StageLedger.sol";
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {Typed} from "./TypedData.sol";

/// @notice Thin external wrapper so the StageLedger library can be called (and fuzzed) directly.
contract StageLedgerHarness {
    using StageLedger for uint256;

    function set(uint256 ledger, uint256 position, uint8 status, uint16 mask) external pure returns (uint256) {
        return ledger.set(position, IApprovalRegistry.DecisionStatus(status), mask);
    }

    function statusAt(uint256 ledger, uint256 position) external pure returns (uint8) {
        return uint8(ledger.statusAt(position));
    }

    function reviewedAt(uint256 ledger, uint256 position) external pure returns (uint16) {
        return ledger.reviewedAt(position);
    }

    function invalidate(uint256 ledger, uint256 count, uint8 docIndex) external pure returns (uint256, uint8) {
        return ledger.invalidate(count, docIndex);
    }

    function decidedPositions(uint256 ledger, uint256 count) external pure returns (uint8) {
        return ledger.decidedPositions(count);
    }

    function reopen(uint256 ledger, uint256 count, uint8 status) external pure returns (uint256 updated, uint8 positions) {
        return ledger.reopen(count, IApprovalRegistry.DecisionStatus(status));
    }

    function approvedPositions(uint256 ledger, uint256 count) external pure returns (uint8) {
        return ledger.approvedPositions(count);
    }

    function firstNotApproved(uint256 ledger, uint256 count) external pure returns (uint8) {
        return ledger.firstNotApproved(count);
    }
}

/// @notice Shared setup for the fuzz tests: the platform wired as in production (through the handler,
/// without its bootstrap), departments DEPT_A..DEPT_F registered by governance with ids 1..6, every actor's key known.
abstract contract PlatformFixture is TestBase {
    using Str for uint256;

    PlatformHandler internal h;
    LicenceToken internal token;
    DocumentRegistry internal documents;
    ApprovalRegistry internal registry;
    address internal governance;
    address internal admin;
    address internal operator;
    address internal keeper;
    address internal stranger;
    address[6] internal wallets;
    uint256[6] internal keys;
    bytes32[6] internal codes;
    /// @dev The registry's EIP-712 domain separator, from its eip712Domain() and the documented domain type.
    bytes32 internal separator;
    // Latest hash of each document of a request, by document index.
    mapping(uint256 tokenId => bytes32[]) internal _docs;
    uint256 private _hashNonce;

    function _deploy() internal {
        h = new PlatformHandler(false);
        token = h.token();
        documents = h.documents();
        registry = h.registry();
        governance = h.governance();
        admin = h.admin();
        operator = h.operator();
        keeper = h.keeper();
        stranger = h.stranger();
        for (uint256 i = 0; i < 6; ++i) {
            wallets[i] = h.deptWallets(i);
            keys[i] = h.deptKeys(i);
            codes[i] = h.deptCodes(i);
        }
        separator = Typed.separatorOf(registry);
    }

    function _input(uint8 executionType, uint8 completion, uint8 threshold, uint8[] memory departmentIndexes)
        internal
        view
        returns (IApprovalRegistry.StageInput memory input)
    {
        input.executionType = IApprovalRegistry.ExecutionType(executionType);
        input.completion = IApprovalRegistry.Completion(completion);
        input.threshold = threshold;
        input.departments = new bytes32[](departmentIndexes.length);
        for (uint256 i = 0; i < departmentIndexes.length; ++i) input.departments[i] = codes[departmentIndexes[i]];
    }

    function _register(bytes32 requestType, IApprovalRegistry.StageInput[] memory stages) internal returns (uint32 id) {
        vm.prank(governance);
        id = registry.registerWorkflow(requestType, keccak256("definition"), 365 days, stages);
    }

    function _mint(uint256 id, bytes32 requestType) internal {
        address applicant = h.applicants(0);
        vm.prank(operator);
        token.mint(applicant, id, requestType, bytes32(0));
    }

    function _mintAndSubmit(uint256 id, bytes32 requestType, uint256 docCount) internal {
        _mint(id, requestType);
        for (uint256 i = 0; i < docCount; ++i) _anchor(id);
        vm.prank(operator);
        registry.submit(id);
    }

    /// @dev Anchors a new document of request `id` (version 1).
    function _anchor(uint256 id) internal returns (bytes32 hash) {
        hash = _freshHash();
        vm.prank(operator);
        documents.anchorDocument(id, bytes16(uint128(_hashNonce)), "DOC", hash);
        _docs[id].push(hash);
    }

    /// @dev Anchors the next version of document `docIndex` of request `id`; returns the hash it replaces.
    function _newVersion(uint256 id, uint256 docIndex) internal returns (bytes32 previous) {
        previous = _docs[id][docIndex];
        bytes32 hash = _freshHash();
        vm.prank(operator);
        documents.anchorVersion(id, previous, hash);
        _docs[id][docIndex] = hash;
    }

    function _freshHash() internal returns (bytes32) {
        return keccak256(abi.encode("fuzz document", ++_hashNonce));
    }

    /// @dev The latest hashes of the documents `mask` covers (every document when 0), by ascending index.
    function _hashes(uint256 id, uint16 mask) internal view returns (bytes32[] memory hashes) {
        uint256 count = _docs[id].length;
        uint256 covered = mask == 0 ? (1 << count) - 1 : mask & ((1 << count) - 1);
        uint256 n;
        for (uint256 bits = covered; bits != 0; bits &= bits - 1) ++n;
        hashes = new bytes32[](n);
        uint256 k;
        for (uint256 i = 0; i < count; ++i) {
            if ((covered >> i) & 1 == 1) hashes[k++] = _docs[id][i];
        }
    }

    /// @dev Department `dept`'s decision as it would make it now: its next nonce, the current stage and round, the
    /// latest hashes of the documents in `mask`, a deadline an hour ahead.
    function _decision(uint256 id, uint16 dept, uint8 decision, uint16 mask)
        internal
        view
        returns (IApprovalRegistry.Decision memory d)
    {
        IApprovalRegistry.Progress memory progress = registry.progressOf(id);
        d = IApprovalRegistry.Decision({
            tokenId: id,
            departmentId: dept,
            stage: progress.stage,
            round: progress.stageStartedAt,
            decision: IApprovalRegistry.DecisionStatus(decision),
            reasonCode: decision == D_REJECTED ? 1 : 0,
            reviewedMask: mask,
            documents: _hashes(id, mask),
            remarksHash: keccak256(abi.encode("remarks", id, dept)),
            nonce: registry.departmentRecord(dept).nonce,
            deadline: uint64(block.timestamp + 1 hours)
        });
    }

    /// @dev Department `departmentIndex` (0 = DEPT_A) sends its decision from its wallet.
    function _decide(uint256 departmentIndex, uint256 id, uint8 decision, uint16 mask) internal {
        IApprovalRegistry.Decision memory d = _decision(id, uint16(departmentIndex + 1), decision, mask);
        vm.prank(wallets[departmentIndex]);
        registry.decide(d);
    }

    function _sign(uint256 key, IApprovalRegistry.Decision memory d) internal view returns (bytes memory) {
        return Typed.sign(vm, key, Typed.decisionDigest(separator, d));
    }

    function _keyProof(uint256 key, bytes32 code, address wallet, IApprovalRegistry.Custody custody)
        internal
        view
        returns (bytes memory)
    {
        return Typed.sign(vm, key, Typed.keyDigest(separator, code, wallet, uint8(custody)));
    }

    function _statusOf(uint256 id) internal view returns (uint8) {
        return uint8(token.licence(id).status);
    }

    function _nonceOf(uint16 dept) internal view returns (uint64) {
        return registry.departmentRecord(dept).nonce;
    }

    function _one(uint8 departmentIndex) internal pure returns (uint8[] memory list) {
        list = new uint8[](1);
        list[0] = departmentIndex;
    }

    function _two(uint8 a, uint8 b) internal pure returns (uint8[] memory list) {
        list = new uint8[](2);
        (list[0], list[1]) = (a, b);
    }
}

// =========================================================================================================
// (a) Fuzz tests
// =========================================================================================================

contract PlatformFuzzTest is PlatformFixture {
    using Str for uint256;

    StageLedgerHarness internal ledgerLib;

    function setUp() public {
        _deploy();
        ledgerLib = new StageLedgerHarness();
        // A one-stage workflow and two Draft requests (tokens 1 and 2) owned by two applicants.
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](1);
        uint8[] memory a = new uint8[](1);
        stages[0] = _input(EX_PARALLEL, C_ALL, 0, a);
        _register("BASE", stages);
        address first = h.applicants(0);
        address second = h.applicants(1);
        vm.prank(operator);
        token.mint(first, 1, "BASE", bytes32(0));
        vm.prank(operator);
        token.mint(second, 2, "BASE", bytes32(0));
    }

    // ------------------------------------------------------------------------------ soulbound

    /// @notice Every transfer and approval path reverts, for any caller (owner included) and any recipient,
    /// and ownership, balances and approvals never change.
    function testFuzz_tokensNeverMove(address caller, address to, uint256 seed, bytes calldata data) public {
        uint256 id = 1 + seed % 2;
        address owner = token.ownerOf(id);
        if (seed & 2 == 0) caller = owner; // half the runs: the owner itself tries
        address from = seed & 4 == 0 ? owner : caller;
        uint256 ownerBalance = token.balanceOf(owner);
        uint256 toBalance = to == address(0) ? 0 : token.balanceOf(to);
        bytes memory soulbound = abi.encodeWithSelector(ILicenceToken.LicenceSoulbound.selector, id);

        vm.expectRevert(soulbound);
        vm.prank(caller);
        token.transferFrom(from, to, id);

        vm.expectRevert(soulbound);
        vm.prank(caller);
        token.safeTransferFrom(from, to, id);

        vm.expectRevert(soulbound);
        vm.prank(caller);
        token.safeTransferFrom(from, to, id, data);

        vm.expectRevert(soulbound);
        vm.prank(caller);
        token.approve(to, id);

        vm.expectRevert(abi.encodeWithSelector(ILicenceToken.LicenceSoulboundOperator.selector, to));
        vm.prank(caller);
        token.setApprovalForAll(to, seed & 8 == 0);

        require(token.ownerOf(id) == owner, "owner changed");
        require(token.ownerOf(3 - id) == h.applicants(2 - id), "other token's owner changed");
        require(token.balanceOf(owner) == ownerBalance, "owner balance changed");
        if (to != address(0)) require(token.balanceOf(to) == toBalance, "recipient balance changed");
        require(token.getApproved(id) == address(0), "approval recorded");
        require(!token.isApprovedForAll(owner, to), "operator approval recorded");
        require(token.locked(id), "not locked");
    }

    // ------------------------------------------------------------------------------ who can decide

    /// @notice Stage 0 lists a random subset of the departments, stage 1 the others. A random caller (a
    /// department wallet, a role holder or any address, naming its own department or, for an outsider, any) can
    /// decide in stage 0 iff it is the wallet of a department of stage 0; once stage 0 completes, only stage 1's
    /// departments can.
    function testFuzz_onlyCurrentStageDepartmentsCanDecide(address randomCaller, uint256 seed) public {
        uint256 subset = 1 + seed % 62; // departments of stage 0 (bit i: department i), never all six
        (uint8[] memory first, uint8[] memory second) = _split(subset);
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](2);
        stages[0] = _input(EX_PARALLEL, C_ANY, 0, first);
        stages[1] = _input(EX_PARALLEL, C_ALL, 0, second);
        _register("SUBSET", stages);
        _mintAndSubmit(10, "SUBSET", 1);

        address caller;
        uint256 c = (seed >> 6) % 8;
        if (c < 6) {
            caller = wallets[c];
        } else if (c == 6) {
            caller = randomCaller;
        } else {
            address[6] memory others = [operator, admin, keeper, stranger, h.applicants(0), governance];
            caller = others[(seed >> 9) % 6];
        }
        uint256 departmentIndex = 6;
        for (uint256 i = 0; i < 6; ++i) {
            if (wallets[i] == caller) departmentIndex = i;
        }
        bool inStage0 = departmentIndex < 6 && (subset >> departmentIndex) & 1 == 1;
        uint256 kind = (seed >> 12) % 3;
        uint16 named = departmentIndex < 6 ? uint16(departmentIndex + 1) : uint16(1 + (seed >> 20) % 6);
        IApprovalRegistry.Decision memory d = _decision(10, named, _decisionOf(kind), 1);

        if (!inStage0) vm.expectRevert();
        vm.prank(caller);
        registry.decide(d);

        (, IApprovalRegistry.DecisionStatus[] memory statuses,) = registry.decisionsOf(10, 0);
        for (uint256 p = 0; p < first.length; ++p) {
            uint8 expected = inStage0 && first[p] == departmentIndex ? uint8(_decisionOf(kind)) : D_PENDING;
            require(uint8(statuses[p]) == expected, "stage 0 decisions");
        }
        if (!inStage0 || kind != 0) return;

        // Stage 0 completed (ANY): now only stage 1's departments can decide.
        require(registry.progressOf(10).stage == 1, "stage 0 should be complete");
        uint256 other = (seed >> 16) % 6;
        bool inStage1 = (subset >> other) & 1 == 0;
        d = _decision(10, uint16(other + 1), D_APPROVED, 1);
        if (!inStage1) vm.expectRevert();
        vm.prank(wallets[other]);
        registry.decide(d);
    }

    // ------------------------------------------------------------------------------ sequential order

    /// @notice A SEQUENTIAL stage of 2..6 departments in a random order: any permutation of approval attempts
    /// succeeds exactly for the department whose turn it is; the others revert with the right error.
    function testFuzz_sequentialOrderEnforced(uint256 seed) public {
        uint256 n = 2 + seed % 5;
        uint8[] memory order = _permutation(seed >> 3, n);
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](1);
        stages[0] = _input(EX_SEQUENTIAL, C_ALL, 0, order);
        _register("SEQ", stages);
        _mintAndSubmit(20, "SEQ", 1);

        uint256 next;
        for (uint256 k = 0; k < 3 * n && next < n; ++k) {
            uint256 pos = uint256(keccak256(abi.encode(seed, k))) % n;
            uint16 departmentId = uint16(order[pos]) + 1;
            IApprovalRegistry.Decision memory d = _decision(20, departmentId, D_APPROVED, 1);
            if (pos > next) {
                vm.expectRevert(
                    abi.encodeWithSelector(
                        IApprovalRegistry.ReviewNotYourTurn.selector, 20, uint8(0), departmentId, uint8(next)
                    )
                );
            } else if (pos < next) {
                vm.expectRevert(
                    abi.encodeWithSelector(
                        IApprovalRegistry.ReviewAlreadyDecided.selector,
                        20,
                        uint8(0),
                        departmentId,
                        IApprovalRegistry.DecisionStatus.Approved
                    )
                );
            }
            vm.prank(wallets[order[pos]]);
            registry.decide(d);
            if (pos == next) ++next;
            if (next < n) {
                uint16[] memory pending = registry.pendingDepartmentsOf(20);
                require(pending.length == 1 && pending[0] == uint16(order[next]) + 1, "pending is not the next one");
            }
        }
        for (; next < n; ++next) {
            require(_statusOf(20) == S_SUBMITTED, "approved too early");
            _decide(order[next], 20, D_APPROVED, 1);
        }
        require(_statusOf(20) == S_APPROVED, "not approved after every department in order");
    }

    // ------------------------------------------------------------------------------ submit only once

    /// @notice Spec: submit is Draft -> Submitted only. Whatever point of the review a request reached, once a
    /// department asked for changes (or a RetryStage rejection sent it back), `submit` must revert and leave
    /// the review where it was; only `resubmit` continues it, in the same stage.
    function testFuzz_submitOnlyFromDraft(uint256 seed) public {
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](2);
        uint8[] memory ab = new uint8[](2);
        (ab[0], ab[1]) = (0, 1);
        uint8[] memory cd = new uint8[](2);
        (cd[0], cd[1]) = (2, 3);
        stages[0] = _input(EX_SEQUENTIAL, C_ALL, 0, ab);
        stages[1] = _input(EX_PARALLEL, C_ALL, 0, cd);
        stages[0].onRejection = IApprovalRegistry.RejectionAction.RetryStage;
        stages[1].onRejection = IApprovalRegistry.RejectionAction.RetryStage;
        _register("ONCE", stages);
        _mintAndSubmit(30, "ONCE", 1);

        vm.expectRevert();
        vm.prank(operator);
        registry.submit(30); // already Submitted

        uint256 approvals = seed % 4; // A, B (stage 0, in order), then C
        for (uint256 i = 0; i < approvals; ++i) _decide(i, 30, D_APPROVED, 1);
        uint16[] memory pending = registry.pendingDepartmentsOf(30);
        uint16 next = pending[(seed >> 2) % pending.length];
        bool changes = (seed >> 8) % 2 == 0;
        _decide(next - 1, 30, changes ? D_CHANGES : D_REJECTED, 1);
        require(_statusOf(30) == S_PENDING_RESUBMISSION, "not sent back to the applicant");
        uint8 stage = registry.progressOf(30).stage;
        (, IApprovalRegistry.DecisionStatus[] memory stage0Before,) = registry.decisionsOf(30, 0);

        vm.expectRevert();
        vm.prank(operator);
        registry.submit(30);

        require(registry.progressOf(30).stage == stage, "submit moved the review");
        (, IApprovalRegistry.DecisionStatus[] memory stage0After,) = registry.decisionsOf(30, 0);
        for (uint256 p = 0; p < 2; ++p) require(stage0After[p] == stage0Before[p], "submit changed decisions");
        vm.prank(operator);
        registry.resubmit(30);
        require(registry.progressOf(30).stage == stage, "resubmit moved the review");
    }

    // ------------------------------------------------------------------------------ StageLedger library

    /// @notice set / statusAt / reviewedAt round-trip on a random ledger, touching only the written position.
    function testFuzz_stageLedgerRoundTrip(uint256 seed, uint8 position, uint8 status, uint16 mask) public view {
        (uint256 ledger, uint8[8] memory statuses, uint16[8] memory masks) = _randomLedger(seed, false, 0);
        for (uint256 p = 0; p < 8; ++p) {
            require(ledgerLib.statusAt(ledger, p) == statuses[p], "built status");
            require(ledgerLib.reviewedAt(ledger, p) == masks[p], "built mask");
        }
        require(ledger >> 152 == 0, "ledger exceeds 152 bits");

        uint256 pos = position % 8;
        uint8 st = status % 5;
        uint256 updated = ledgerLib.set(ledger, pos, st, mask);
        require(updated >> 152 == 0, "updated ledger exceeds 152 bits");
        for (uint256 p = 0; p < 8; ++p) {
            uint8 expectedStatus = p == pos ? st : statuses[p];
            uint16 expectedMask = p == pos ? mask : masks[p];
            require(ledgerLib.statusAt(updated, p) == expectedStatus, string.concat("status at ", p.u()));
            require(ledgerLib.reviewedAt(updated, p) == expectedMask, string.concat("mask at ", p.u()));
        }
        // Writing back what was there gives the same ledger.
        require(ledgerLib.set(updated, pos, statuses[pos], masks[pos]) == ledger, "set is not reversible");
    }

    /// @notice invalidate only turns Approved positions (< count) whose mask has `docIndex` into ReviewRequired,
    /// keeping their mask, and reports exactly them.
    function testFuzz_stageLedgerInvalidate(uint256 seed, uint8 count, uint8 docIndex) public view {
        uint256 n = 1 + count % 8;
        uint8 doc = docIndex % 16;
        (uint256 ledger, uint8[8] memory statuses, uint16[8] memory masks) = _randomLedger(seed, true, doc);
        (uint256 updated, uint8 hits) = ledgerLib.invalidate(ledger, n, doc);
        for (uint256 p = 0; p < 8; ++p) {
            bool hit = p < n && statuses[p] == D_APPROVED && (masks[p] >> doc) & 1 == 1;
            require(((hits >> p) & 1 == 1) == hit, string.concat("hit bit ", p.u()));
            require(
                ledgerLib.statusAt(updated, p) == (hit ? D_REVIEW_REQUIRED : statuses[p]), string.concat("status ", p.u())
            );
            require(ledgerLib.reviewedAt(updated, p) == masks[p], string.concat("mask ", p.u()));
        }
    }

    /// @notice reopen, approvedPositions and firstNotApproved agree with a direct reading of the positions.
    function testFuzz_stageLedgerReopenAndTurn(uint256 seed, uint8 count, uint8 status) public view {
        uint256 n = 1 + count % 8;
        uint8 st = status % 5;
        (uint256 ledger, uint8[8] memory statuses, uint16[8] memory masks) = _randomLedger(seed, true, 0);
        (uint256 reopened, uint8 positions) = ledgerLib.reopen(ledger, n, st);
        uint8 approved;
        uint8 decided;
        uint8 first = uint8(n);
        for (uint256 p = 0; p < 8; ++p) {
            bool reset = p < n && statuses[p] == st;
            require(((positions >> p) & 1 == 1) == reset, string.concat("reopened bit ", p.u()));
            if (p < n && statuses[p] != D_PENDING) decided |= uint8(1 << p);
            require(ledgerLib.statusAt(reopened, p) == (reset ? D_PENDING : statuses[p]), "reopen status");
            require(ledgerLib.reviewedAt(reopened, p) == (reset ? 0 : masks[p]), "reopen mask");
            if (p < n && statuses[p] == D_APPROVED) approved |= uint8(1 << p);
            if (p < n && statuses[p] != D_APPROVED && first == n) first = uint8(p);
        }
        require(ledgerLib.approvedPositions(ledger, n) == approved, "approvedPositions");
        require(ledgerLib.firstNotApproved(ledger, n) == first, "firstNotApproved");
        require(ledgerLib.decidedPositions(ledger, n) == decided, "decidedPositions");
    }

    // ------------------------------------------------------------------------------ signed decisions

    /// @notice A relayed EIP-712 decision is recorded iff it is signed with the department's own key, carries the
    /// department's next nonce and its deadline has not passed; then the nonce moves on and the same signature can
    /// never be replayed. The digest is computed here from the type string IApprovalRegistry documents and the domain
    /// eip712Domain() reports, not by the verifier, so the two must agree.
    function testFuzz_signedDecisionOnlyFromTheDepartmentKey(uint256 signerKey, uint256 seed) public {
        uint256 departmentKey = 0xD3A1;
        address wallet = vm.addr(departmentKey);
        bytes memory proof = _keyProof(departmentKey, "SIGNER", wallet, IApprovalRegistry.Custody.DepartmentHeld);
        vm.prank(governance);
        uint16 dept = registry.registerDepartment("SIGNER", wallet, IApprovalRegistry.Custody.DepartmentHeld, proof);
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](1);
        stages[0].executionType = IApprovalRegistry.ExecutionType.Parallel;
        stages[0].departments = new bytes32[](1);
        stages[0].departments[0] = "SIGNER";
        _register("SIGNED", stages);
        _mintAndSubmit(40, "SIGNED", 2);

        if (seed % 2 == 0) signerKey = departmentKey;
        signerKey = bound(signerKey, 1, SECP256K1_ORDER - 1);
        IApprovalRegistry.Decision memory decision =
            _decision(40, dept, (seed >> 1) % 2 == 0 ? D_APPROVED : D_CHANGES, uint16((seed >> 2) % 4));
        decision.remarksHash = keccak256(abi.encode(seed));
        decision.nonce = (seed >> 4) % 4 == 0 ? 1 : 0;
        decision.deadline =
            uint64((seed >> 6) % 4 == 0 ? block.timestamp - 1 : block.timestamp + (seed >> 8) % MAX_DECISION_LIFETIME);
        bytes memory signature = _sign(signerKey, decision);
        bool valid = signerKey == departmentKey && decision.nonce == 0 && decision.deadline >= block.timestamp;

        if (!valid) vm.expectRevert();
        vm.prank(stranger);
        registry.decideBySig(decision, signature);
        (, IApprovalRegistry.DecisionStatus[] memory statuses,) = registry.decisionsOf(40, 0);
        require(statuses[0] == (valid ? decision.decision : IApprovalRegistry.DecisionStatus.Pending), "decision recorded");
        require(_nonceOf(dept) == (valid ? 1 : 0), "nonce");
        if (valid) {
            vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidNonce.selector, dept, 1, 0));
            vm.prank(operator);
            registry.decideBySig(decision, signature);
        }
    }

    // ------------------------------------------------------------------------------ what a decision binds

    /// @notice A decision, sent by the department's wallet or signed and relayed, is recorded only when it names the
    /// department's next nonce, the request's current stage and round (progressOf.stage / stageStartedAt), the latest
    /// hash of every document it covers (ascending, no more, no fewer) and a deadline within
    /// [now, now + MAX_DECISION_LIFETIME] (both ends accepted); in 7 runs out of 8 exactly one field is wrong (or it
    /// names another department) and the refusal names that field. A recorded decision consumes the nonce on either
    /// route: it cannot be replayed on either, and the signature the department gave for another request at the same
    /// nonce is void. A refused one consumes nothing: that signature still lands.
    function testFuzz_decisionBindsNonceStageRoundDocumentsAndDeadline(uint256 seed, uint256 value) public {
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](2);
        stages[0] = _input(EX_PARALLEL, C_ALL, 0, _two(0, 1));
        stages[1] = _input(EX_PARALLEL, C_ALL, 0, _one(2));
        _register("BOUND", stages);
        _mint(50, "BOUND");
        for (uint256 i = 0; i < 3; ++i) _anchor(50);
        bytes32 olderVersion = _newVersion(50, 1);
        vm.prank(operator);
        registry.submit(50);
        // A's nonce moves past 0: it approves request 1 (BASE: A alone, no document).
        vm.prank(operator);
        registry.submit(1);
        _decide(0, 1, D_APPROVED, 0);
        require(_nonceOf(1) == 1, "a decision sent from the wallet did not consume the nonce");
        // The first round of stage 0 ends: B asks for changes and the applicant resubmits later.
        uint40 firstRound = registry.progressOf(50).stageStartedAt;
        _decide(1, 50, D_CHANGES, 0);
        vm.warp(block.timestamp + 1 + (seed >> 32) % 1 days);
        vm.prank(operator);
        registry.resubmit(50);
        require(registry.progressOf(50).stageStartedAt > firstRound, "resubmission did not start a new round");
        // Request 2 (BASE) in review: A's signature on it carries the same nonce as the decision under test.
        vm.prank(operator);
        registry.submit(2);
        IApprovalRegistry.Decision memory other = _decision(2, 1, D_APPROVED, 0);
        bytes memory otherSignature = _sign(keys[0], other);

        uint8[3] memory kinds = [D_APPROVED, D_CHANGES, D_REJECTED];
        uint8 kind = kinds[(seed >> 4) % 3];
        uint16 mask = uint16((seed >> 6) % 8); // over three documents; 0 = every document
        IApprovalRegistry.Decision memory d = _decision(50, 1, kind, mask);
        if (kind == D_REJECTED) d.reasonCode = uint8(1 + (seed >> 9) % 5);
        uint256 ahead = (seed >> 12) % 3;
        d.deadline = uint64(
            block.timestamp + (ahead == 0 ? 0 : ahead == 1 ? MAX_DECISION_LIFETIME : value % MAX_DECISION_LIFETIME)
        );
        bool bySig = (seed >> 3) & 1 == 1;
        uint64 nonce = d.nonce;
        bytes memory expected = _spoil(d, seed % 8, value, bySig, firstRound, olderVersion);
        bytes memory signature = bySig ? _sign(keys[0], d) : bytes("");

        if (expected.length != 0) vm.expectRevert(expected);
        if (bySig) {
            vm.prank(stranger);
            registry.decideBySig(d, signature);
        } else {
            vm.prank(wallets[0]);
            registry.decide(d);
        }

        (, IApprovalRegistry.DecisionStatus[] memory statuses, uint16[] memory masks) = registry.decisionsOf(50, 0);
        if (expected.length != 0) {
            require(_nonceOf(1) == nonce, "a refused decision moved the nonce");
            require(statuses[0] == IApprovalRegistry.DecisionStatus.Pending, "a refused decision was recorded");
            vm.prank(stranger);
            registry.decideBySig(other, otherSignature);
            require(_statusOf(2) == S_APPROVED && _nonceOf(1) == nonce + 1, "the signature at the unused nonce did not land");
            return;
        }
        require(_nonceOf(1) == nonce + 1, "a recorded decision did not consume exactly its nonce");
        require(statuses[0] == d.decision && masks[0] == (mask == 0 ? 7 : mask), "decision not recorded as named");
        bytes memory replay = abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidNonce.selector, 1, nonce + 1, nonce);
        vm.expectRevert(replay);
        vm.prank(wallets[0]);
        registry.decide(d);
        bytes memory again = _sign(keys[0], d);
        vm.expectRevert(replay);
        vm.prank(operator);
        registry.decideBySig(d, again);
        vm.expectRevert(replay);
        vm.prank(stranger);
        registry.decideBySig(other, otherSignature);
        require(_statusOf(2) == S_SUBMITTED, "a voided signature decided");
    }

    // ------------------------------------------------------------------------------ cancelling signatures

    /// @notice A department that raises its nonce (by 1 .. 2^32 - 1) voids every signature it gave below the new
    /// nonce, whoever relays it, and only those: signatures at or above it still land, in order. A raise that does not
    /// move forward, or moves by more than 2^32 - 1, is refused; no one but a department's wallet can raise a nonce,
    /// and another department's raise moves only its own. A refused raise voids nothing.
    function testFuzz_increaseDecisionNonceVoidsEarlierSignatures(uint256 seed, uint256 jump) public {
        uint64 start = uint64(seed % 3);
        if (start != 0) {
            vm.prank(wallets[0]);
            registry.increaseDecisionNonce(start);
        }
        // Four requests (BASE: A alone) in review; A signs a decision on each, at nonces start .. start + 3.
        IApprovalRegistry.Decision[4] memory signed;
        bytes[4] memory signatures;
        for (uint256 i = 0; i < 4; ++i) {
            _mintAndSubmit(60 + i, "BASE", 0);
            signed[i] = _decision(60 + i, 1, D_APPROVED, 0);
            signed[i].nonce = start + uint64(i);
            signatures[i] = _sign(keys[0], signed[i]);
        }

        uint256 mode = (seed >> 2) % 4;
        uint64 next = start; // A's next nonce, as this test expects it
        if (mode < 2) {
            uint64 target = start + uint64(1 + jump % (2 ** 32 - 1));
            vm.expectEmit(true, false, false, true, address(registry));
            emit IApprovalRegistry.DecisionNonceIncreased(1, start, target);
            vm.prank(wallets[0]);
            registry.increaseDecisionNonce(target);
            next = target;
        } else if (mode == 2) {
            uint64 bad = jump % 2 == 0
                ? uint64((jump >> 1) % (uint256(start) + 1))
                : start + uint64(2 ** 32 + (jump >> 1) % 2 ** 40);
            vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidNonceIncrease.selector, 1, start, bad));
            vm.prank(wallets[0]);
            registry.increaseDecisionNonce(bad);
        } else {
            address[6] memory callers = [governance, admin, operator, keeper, stranger, wallets[1]];
            address caller = callers[(seed >> 4) % 6];
            if (caller != wallets[1]) vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.NotADepartment.selector, caller));
            vm.prank(caller);
            registry.increaseDecisionNonce(start + 5);
            require(_nonceOf(2) == (caller == wallets[1] ? start + 5 : 0), "B's nonce");
        }
        require(_nonceOf(1) == next, "A's nonce after the raise");

        for (uint256 i = 0; i < 4; ++i) {
            uint64 n = signed[i].nonce;
            if (n < next) {
                vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidNonce.selector, 1, next, n));
            }
            vm.prank(i % 2 == 0 ? stranger : operator);
            registry.decideBySig(signed[i], signatures[i]);
            if (n < next) {
                require(_statusOf(60 + i) == S_SUBMITTED, "a voided signature decided");
            } else {
                require(n == next && _statusOf(60 + i) == S_APPROVED, "a signature at or above the nonce did not land");
                next += 1;
            }
        }
        require(_nonceOf(1) == next, "nonce after the relays");
        // The department itself still decides, at its current nonce.
        if (_statusOf(60) == S_SUBMITTED) {
            _decide(0, 60, D_APPROVED, 0);
            require(_statusOf(60) == S_APPROVED && _nonceOf(1) == next + 1, "a fresh decision at the new nonce");
        }
    }

    // ------------------------------------------------------------------------------ documents added under review

    /// @notice A document added under review was seen by no one: every approval of every stage reached becomes
    /// ReviewRequired (its mask kept, whatever documents it covered), review goes back to stage 0 when a later stage is
    /// current (StageReopened, clock restarted; requests for changes of the stage left no longer stand), and the licence
    /// is issued only after every department whose approval was reopened approved again, the others deciding first
    /// (so a stage's rule met without them does not complete it). A decision for "every document" that names only the
    /// documents seen before is refused.
    function testFuzz_documentAddedUnderReviewReopensEveryStage(uint256 seed) public {
        // Stage 0 SEQUENTIAL ALL [A, B]; stage 1 PARALLEL THRESHOLD 1 of [C, D]; stage 2 PARALLEL ALL [E, F].
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](3);
        stages[0] = _input(EX_SEQUENTIAL, C_ALL, 0, _two(0, 1));
        stages[1] = _input(EX_PARALLEL, C_THRESHOLD, 1, _two(2, 3));
        stages[2] = _input(EX_PARALLEL, C_ALL, 0, _two(4, 5));
        _register("REOPEN", stages);
        _mintAndSubmit(70, "REOPEN", 2);

        uint8 reached = uint8(seed % 3);
        if (reached >= 1) {
            _decide(0, 70, D_APPROVED, _reviewed(seed, 0));
            _decide(1, 70, D_APPROVED, _reviewed(seed, 1));
        }
        if (reached == 2) _decide(2 + (seed >> 2) % 2, 70, D_APPROVED, _reviewed(seed, 2));
        // In the current stage: maybe an approval that does not complete it, maybe a request for changes.
        if ((seed >> 3) % 2 == 1 && reached != 1) _decide(reached == 0 ? 0 : 4, 70, D_APPROVED, _reviewed(seed, 3));
        if ((seed >> 4) % 2 == 1) {
            uint16[] memory waiting = registry.pendingDepartmentsOf(70);
            _decide(waiting[(seed >> 5) % waiting.length] - 1, 70, D_CHANGES, 0);
        }
        IApprovalRegistry.Progress memory before = registry.progressOf(70);
        require(before.stage == reached, "setup: stage");
        uint8[2][3] memory st;
        uint16[2][3] memory mk;
        for (uint8 s = 0; s <= reached; ++s) {
            (, IApprovalRegistry.DecisionStatus[] memory sts, uint16[] memory masks) = registry.decisionsOf(70, s);
            for (uint256 p = 0; p < 2; ++p) (st[s][p], mk[s][p]) = (uint8(sts[p]), masks[p]);
        }

        vm.warp(block.timestamp + 1 + (seed >> 8) % 1 days);
        if (reached > 0) {
            vm.expectEmit(true, false, false, true, address(registry));
            emit IApprovalRegistry.StageReopened(70, reached, 0);
        }
        _anchor(70);

        IApprovalRegistry.Progress memory reopened = registry.progressOf(70);
        require(reopened.stage == 0, "review did not go back to the first stage");
        require(reopened.phase == before.phase, "the phase changed");
        require(
            reopened.stageStartedAt == (reached > 0 ? uint40(block.timestamp) : before.stageStartedAt),
            "stage clock"
        );
        bool[7] memory mustApproveAgain;
        for (uint8 s = 0; s <= reached; ++s) {
            (uint16[] memory depts, IApprovalRegistry.DecisionStatus[] memory sts, uint16[] memory masks) =
                registry.decisionsOf(70, s);
            for (uint256 p = 0; p < 2; ++p) {
                uint8 expectedStatus = st[s][p];
                uint16 expectedMask = mk[s][p];
                if (expectedStatus == D_APPROVED) {
                    expectedStatus = D_REVIEW_REQUIRED;
                    mustApproveAgain[depts[p]] = true;
                } else if (expectedStatus == D_CHANGES && s == reached && reached > 0) {
                    (expectedStatus, expectedMask) = (D_PENDING, 0);
                }
                require(
                    uint8(sts[p]) == expectedStatus && masks[p] == expectedMask,
                    string.concat("stage ", uint256(s).u(), " position ", p.u(), " after the document was added")
                );
            }
        }
        if (reopened.phase == IApprovalRegistry.Phase.InReview) {
            uint16 first = registry.pendingDepartmentsOf(70)[0];
            IApprovalRegistry.Decision memory unseen = _decision(70, first, D_APPROVED, 0);
            bytes32[] memory seenBefore = new bytes32[](2);
            (seenBefore[0], seenBefore[1]) = (_docs[70][0], _docs[70][1]);
            unseen.documents = seenBefore;
            vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.ReviewStaleDocuments.selector, 70, 2, bytes32(0)));
            vm.prank(wallets[first - 1]);
            registry.decide(unseen);
        }

        // Drive to issuance, the departments that did not lose an approval deciding first.
        bool[7] memory approvedAgain;
        for (uint256 step = 0; step < 16 && _statusOf(70) != S_APPROVED; ++step) {
            if (registry.progressOf(70).phase == IApprovalRegistry.Phase.AwaitingResubmission) {
                vm.prank(operator);
                registry.resubmit(70);
                continue;
            }
            uint16[] memory waiting = registry.pendingDepartmentsOf(70);
            uint16 dept = waiting[0];
            for (uint256 i = waiting.length; i > 0; --i) {
                if (!mustApproveAgain[waiting[i - 1]]) dept = waiting[i - 1];
            }
            _decide(dept - 1, 70, D_APPROVED, 0);
            approvedAgain[dept] = true;
        }
        require(_statusOf(70) == S_APPROVED, "not issued after every department approved");
        for (uint16 dept = 1; dept <= 6; ++dept) {
            if (mustApproveAgain[dept] && !approvedAgain[dept]) {
                revert(string.concat("issued without department ", uint256(dept).u(), " approving again"));
            }
        }
    }

    // ------------------------------------------------------------------------------ who decides who decides

    /// @notice Who decides is governance's: registerDepartment, registerWorkflow and proposeDepartmentWallet succeed
    /// only for DEFAULT_ADMIN_ROLE; the administrator (ADMIN_ROLE), the operator (OPERATOR_ROLE), the keeper, a
    /// department wallet, a stranger or any address is refused (AccessControlUnauthorizedAccount) and nothing changes.
    /// A department wallet needs its key proof: its own EIP-712 signature of DepartmentKey(code, wallet, custody) in
    /// the registry's domain; a proof by another key, for another code, custody or wallet, or garbage is refused
    /// (DepartmentInvalidKeyProof). A role holder is refused as a department wallet even with its own valid proof.
    function testFuzz_onlyGovernanceDecidesWhoDecides(uint256 seed, uint256 walletKey, address anyone) public {
        uint256 action = seed % 3; // 0 registerDepartment, 1 registerWorkflow, 2 proposeDepartmentWallet
        address caller;
        {
            if (anyone == address(h)) anyone = stranger; // the deployer also holds DEFAULT_ADMIN_ROLE
            address[8] memory callers =
                [governance, governance, admin, operator, keeper, stranger, wallets[(seed >> 5) % 6], anyone];
            caller = callers[(seed >> 2) % 8];
        }
        uint256 walletKind = (seed >> 8) % 8; // 0: a role holder, with its own key
        address wallet;
        if (walletKind == 0) {
            address[4] memory holders = [governance, admin, operator, keeper];
            wallet = holders[(seed >> 11) % 4];
            walletKey = h.keyFor(wallet);
        } else {
            walletKey = bound(walletKey, 1, SECP256K1_ORDER - 1);
            wallet = vm.addr(walletKey);
            if (h.keyFor(wallet) != 0) {
                walletKey = keyOf(abi.encode("fresh wallet", seed));
                wallet = vm.addr(walletKey);
            }
        }
        IApprovalRegistry.Custody custody = IApprovalRegistry.Custody((seed >> 13) & 1);
        uint16 dept = uint16(1 + (seed >> 17) % 6);
        bytes32 code = action == 0 ? bytes32("NEW_DEPT") : codes[dept - 1];
        uint256 proofKind = (seed >> 14) % 8; // 0..2: valid
        bytes memory proof = _proofOfKind(proofKind, walletKey, code, wallet, custody, seed);

        bytes memory expected;
        if (caller != governance) {
            expected = abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, caller, bytes32(0));
        } else if (action != 1 && walletKind == 0) {
            expected = abi.encodeWithSelector(IApprovalRegistry.DepartmentWalletHoldsRole.selector, wallet);
        } else if (action != 1 && proofKind >= 3) {
            expected = abi.encodeWithSelector(IApprovalRegistry.DepartmentInvalidKeyProof.selector, code, wallet);
        }
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](1);
        stages[0] = _input(EX_PARALLEL, C_ALL, 0, _one(0));

        if (expected.length != 0) vm.expectRevert(expected);
        vm.prank(caller);
        if (action == 0) registry.registerDepartment(code, wallet, custody, proof);
        else if (action == 1) registry.registerWorkflow("GOVERNED", keccak256("definition"), 0, stages);
        else registry.proposeDepartmentWallet(code, wallet, custody, proof);

        bool ok = expected.length == 0;
        if (action == 0) {
            require(registry.isDepartmentWallet(wallet) == ok, "department wallet");
            if (ok) {
                (uint16 id, address registered, bool active) = registry.departmentByCode(code);
                require(id == 7 && registered == wallet && active, "department not registered as asked");
                require(registry.departmentRecord(7).custody == custody, "custody");
            } else {
                vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.DepartmentUnknown.selector, code));
                registry.departmentByCode(code);
            }
        } else if (action == 1) {
            require((registry.activeWorkflowOf("GOVERNED") != 0) == ok, "workflow registration");
        } else {
            IApprovalRegistry.DepartmentRecord memory r = registry.departmentRecord(dept);
            require(r.wallet == wallets[dept - 1], "a proposal changed the wallet at once");
            require(r.pendingWallet == (ok ? wallet : address(0)), "pending wallet");
            if (ok) {
                require(
                    r.pendingCustody == custody && !r.pendingConsented
                        && r.pendingEffectiveAt == block.timestamp + registry.walletDelay(),
                    "pending change"
                );
            }
        }
    }

    // ------------------------------------------------------------------------------ no role to a department wallet

    /// @notice No role is ever granted to a department wallet, on any of the three contracts, whatever the role (the
    /// four the platform uses or any other) and even by DEFAULT_ADMIN_ROLE, while the same grant to a fresh address
    /// succeeds. A wallet a department moved to is protected as soon as it is the department's; a proposed wallet
    /// that meanwhile received one of the platform's roles can no longer be activated.
    function testFuzz_noRoleForADepartmentWallet(uint256 seed, bytes32 anyRole) public {
        uint256 c = seed % 3;
        IAccessControl target =
            IAccessControl(c == 0 ? address(registry) : c == 1 ? address(token) : address(documents));
        bytes32[4] memory known = [bytes32(0), h.ADMIN_ROLE(), h.OPERATOR_ROLE(), h.KEEPER_ROLE()];
        bytes32 role = (seed >> 2) % 2 == 0 ? known[(seed >> 3) % 4] : anyRole;
        address granter = (seed >> 5) % 2 == 0 ? governance : address(h);
        uint256 i = (seed >> 6) % 6;
        address wallet = wallets[i];
        uint256 path = (seed >> 9) % 3; // 0: the registered wallet; 1: a wallet moved to; 2: a proposed wallet
        if (path != 0) {
            uint256 spareKey = h.spareKeys((seed >> 11) % 6);
            address spare = vm.addr(spareKey);
            IApprovalRegistry.Custody custody = IApprovalRegistry.Custody((seed >> 14) & 1);
            bytes memory proof = _keyProof(spareKey, codes[i], spare, custody);
            vm.prank(governance);
            registry.proposeDepartmentWallet(codes[i], spare, custody, proof);
            vm.warp(block.timestamp + registry.walletDelay());
            if (path == 2) {
                role = known[(seed >> 3) % 4];
                vm.prank(granter);
                target.grantRole(role, spare);
                require(target.hasRole(role, spare), "a wallet only proposed could not be given a role");
                vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.DepartmentWalletHoldsRole.selector, spare));
                registry.activateDepartmentWallet(codes[i]);
                require(registry.departmentRecord(uint16(i + 1)).wallet == wallet, "a role holder became the wallet");
                return;
            }
            registry.activateDepartmentWallet(codes[i]);
            require(registry.departmentRecord(uint16(i + 1)).wallet == spare, "not activated");
            wallet = spare;
        }
        bytes4 refusal = c == 0
            ? IApprovalRegistry.DepartmentWalletHoldsRole.selector
            : c == 1 ? ILicenceToken.LicenceRoleToDepartmentWallet.selector
            : IDocumentRegistry.DocumentRoleToDepartmentWallet.selector;
        vm.expectRevert(abi.encodeWithSelector(refusal, wallet));
        vm.prank(granter);
        target.grantRole(role, wallet);
        require(!target.hasRole(role, wallet), "a department wallet holds a role");

        address fresh = address(uint160(uint256(keccak256(abi.encode("fresh", seed)))));
        vm.prank(granter);
        target.grantRole(role, fresh);
        require(target.hasRole(role, fresh), "the same grant to a fresh address failed");
    }

    // ------------------------------------------------------------------------------ status list anchors

    /// @notice Any caller but the operator is refused; the operator's anchors land only in sequence (1, 2, 3 … per
    /// list) and only for a list a token id can fall in; the view always holds the last one accepted.
    function testFuzz_statusListAnchorsInOrder(uint32 list, uint64 sequence, bytes32 digest, address anyone) public {
        vm.assume(anyone != operator);
        vm.expectRevert(
            abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, anyone, h.OPERATOR_ROLE())
        );
        vm.prank(anyone);
        token.anchorStatusList(list, 1, digest, digest, digest);

        uint32 lastList = uint32(type(uint40).max / 131_072);
        if (list > lastList) {
            vm.expectRevert(abi.encodeWithSelector(ILicenceToken.StatusListOutOfRange.selector, list, lastList));
            vm.prank(operator);
            token.anchorStatusList(list, 1, digest, digest, digest);
            return;
        }
        uint64 anchors = uint64(uint256(digest) % 4);
        for (uint64 s = 1; s <= anchors; s++) {
            vm.prank(operator);
            token.anchorStatusList(list, s, digest, bytes32(uint256(s)), keccak256(abi.encode(digest, s)));
        }
        if (sequence != anchors + 1) {
            vm.expectRevert(
                abi.encodeWithSelector(ILicenceToken.StatusListAnchorOutOfOrder.selector, list, anchors + 1, sequence)
            );
            vm.prank(operator);
            token.anchorStatusList(list, sequence, 0, 0, 0);
        }
        ILicenceToken.StatusListAnchor memory anchor = token.statusListAnchorOf(list);
        require(anchor.sequence == anchors, "the view's sequence is not the last anchor's");
        require(anchor.suspension == bytes32(uint256(anchors)), "the view does not hold the last anchor");
        require(anchor.blockNumber == (anchors == 0 ? 0 : block.number), "the anchor's block");
    }

    // ------------------------------------------------------------------------------ document registry

    /// @notice Random interleavings of anchors (new documents, new versions, stale or duplicate hashes, the other
    /// request's bytes) on two requests: the packed word (phase | count << 8 | 15-bit latest version per index from
    /// bit 16), documentsOf and anchorOf always agree with a plain ghost list of versions. Identical bytes are
    /// refused twice in one request and accepted once in each request.
    function testFuzz_documentVersionsPacked(uint256 seed) public {
        uint16[16][3] memory versions; // [token][docIndex]
        uint256[3] memory count;
        bytes32[16][3] memory latest;
        bytes32[16][3] memory previous; // hash of the version before the latest (0: none)
        uint256 steps = 8 + seed % 24;
        for (uint256 k = 0; k < steps; ++k) {
            uint256 r = uint256(keccak256(abi.encode(seed, k)));
            uint256 t = 1 + r % 2;
            uint256 op = (r >> 8) % 10;
            if (count[t] == 0 || op < 3) {
                bytes32 hash = _freshHash();
                if (count[t] == 16) {
                    vm.expectRevert(abi.encodeWithSelector(IDocumentRegistry.DocumentLimitReached.selector, t, 16));
                    vm.prank(operator);
                    documents.anchorDocument(t, bytes16(uint128(r)), "DOC", hash);
                } else {
                    vm.prank(operator);
                    uint8 index = documents.anchorDocument(t, bytes16(uint128(r)), "DOC", hash);
                    require(index == count[t], "document index");
                    versions[t][index] = 1;
                    latest[t][index] = hash;
                    count[t] += 1;
                }
            } else {
                uint256 i = (r >> 16) % count[t];
                if (op == 3 && previous[t][i] != bytes32(0)) {
                    // A stale hash: not the latest version any more.
                    vm.expectRevert(
                        abi.encodeWithSelector(
                            IDocumentRegistry.DocumentNotLatestVersion.selector,
                            previous[t][i],
                            versions[t][i] - 1,
                            versions[t][i]
                        )
                    );
                    vm.prank(operator);
                    documents.anchorVersion(t, previous[t][i], _freshHash());
                } else if (op == 4) {
                    // Identical bytes cannot be anchored twice.
                    vm.expectRevert(
                        abi.encodeWithSelector(IDocumentRegistry.DocumentAlreadyAnchored.selector, latest[t][i], t)
                    );
                    vm.prank(operator);
                    documents.anchorVersion(t, latest[t][i], latest[t][i]);
                } else if (op == 5 && count[t] < 16 && count[3 - t] > 0) {
                    // The other request's bytes as a new document: once in this request, then refused.
                    bytes32 hash = latest[3 - t][(r >> 24) % count[3 - t]];
                    if (_anchoredIn(t, hash)) {
                        vm.expectRevert(
                            abi.encodeWithSelector(IDocumentRegistry.DocumentAlreadyAnchored.selector, hash, t)
                        );
                        vm.prank(operator);
                        documents.anchorDocument(t, bytes16(uint128(r)), "DOC", hash);
                    } else {
                        vm.prank(operator);
                        uint8 index = documents.anchorDocument(t, bytes16(uint128(r)), "DOC", hash);
                        versions[t][index] = 1;
                        latest[t][index] = hash;
                        count[t] += 1;
                    }
                } else {
                    bytes32 hash = _freshHash();
                    vm.prank(operator);
                    uint16 v = documents.anchorVersion(t, latest[t][i], hash);
                    require(v == versions[t][i] + 1, "version number");
                    versions[t][i] = v;
                    previous[t][i] = latest[t][i];
                    latest[t][i] = hash;
                }
            }
            for (uint256 tt = 1; tt <= 2; ++tt) _checkPacked(tt, versions[tt], count[tt], latest[tt], previous[tt]);
        }
    }

    // ------------------------------------------------------------------------------ helpers

    function _checkPacked(
        uint256 id,
        uint16[16] memory versions,
        uint256 count,
        bytes32[16] memory latest,
        bytes32[16] memory previous
    ) internal view {
        uint256 packed = documents.packedDocumentsOf(id);
        require(packed & 0xff == (count == 0 ? DOC_UNOPENED : DOC_OPEN), "packed phase");
        require((packed >> 8) & 0xff == count, "packed count");
        for (uint256 i = 0; i < 16; ++i) {
            require((packed >> (16 + 15 * i)) & 0x7fff == versions[i], string.concat("packed version ", i.u()));
        }
        (IDocumentRegistry.Phase phase, uint8 n, uint16[] memory latestVersions) = documents.documentsOf(id);
        require(uint8(phase) == (count == 0 ? DOC_UNOPENED : DOC_OPEN) && n == count, "documentsOf");
        for (uint256 i = 0; i < count; ++i) {
            require(latestVersions[i] == versions[i], "documentsOf version");
            (IDocumentRegistry.Anchor memory anchor, bool isLatest) = documents.anchorOf(id, latest[i]);
            require(
                isLatest && anchor.tokenId == id && anchor.docIndex == i && anchor.version == versions[i],
                "anchorOf latest"
            );
            if (previous[i] != bytes32(0)) {
                (anchor, isLatest) = documents.anchorOf(id, previous[i]);
                require(!isLatest && anchor.version == versions[i] - 1 && anchor.docIndex == i, "anchorOf previous");
            }
        }
    }

    function _anchoredIn(uint256 id, bytes32 hash) internal view returns (bool) {
        try documents.anchorOf(id, hash) returns (IDocumentRegistry.Anchor memory, bool) {
            return true;
        } catch {
            return false;
        }
    }

    function _randomLedger(uint256 seed, bool favourApproved, uint8 doc)
        internal
        view
        returns (uint256 ledger, uint8[8] memory statuses, uint16[8] memory masks)
    {
        for (uint256 p = 0; p < 8; ++p) {
            uint256 r = uint256(keccak256(abi.encode(seed, p)));
            statuses[p] = favourApproved && r % 3 != 0 ? D_APPROVED : uint8((r >> 2) % 5);
            masks[p] = uint16(r >> 8);
            if (favourApproved && (r >> 30) % 2 == 0) masks[p] |= uint16(1 << doc);
            ledger = ledgerLib.set(ledger, p, statuses[p], masks[p]);
        }
    }

    /// @dev Gets field `field` of `d` wrong (7: none) and returns the revert the registry must answer with (empty:
    /// none). `d` is department A's decision on request 50, whose stage 0 is in its second round.
    function _spoil(
        IApprovalRegistry.Decision memory d,
        uint256 field,
        uint256 value,
        bool bySig,
        uint40 firstRound,
        bytes32 olderVersion
    ) internal view returns (bytes memory) {
        if (field == 0) {
            uint64 expected = d.nonce;
            d.nonce = value % 2 == 0
                ? uint64((value >> 1) % expected)
                : expected + 1 + uint64((value >> 1) % type(uint32).max);
            return abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidNonce.selector, d.departmentId, expected, d.nonce);
        }
        if (field == 1 || field == 2) {
            (uint8 currentStage, uint40 currentRound) = (d.stage, d.round);
            if (field == 1) {
                d.stage = uint8(1 + value % 255);
            } else if (value % 2 == 0) {
                d.round = firstRound; // the round that ended with the request for changes
            } else {
                d.round = uint40(value >> 1) == currentRound ? currentRound + 1 : uint40(value >> 1);
            }
            return abi.encodeWithSelector(
                IApprovalRegistry.ReviewWrongRound.selector, d.tokenId, d.stage, d.round, currentStage, currentRound
            );
        }
        if (field == 3) return _spoilDocuments(d, value, olderVersion);
        if (field == 4) {
            d.deadline = uint64(block.timestamp - 1 - value % block.timestamp);
            return abi.encodeWithSelector(IApprovalRegistry.ReviewSignatureExpired.selector, d.deadline);
        }
        if (field == 5) {
            d.deadline = uint64(block.timestamp + MAX_DECISION_LIFETIME + 1 + value % type(uint32).max);
            return abi.encodeWithSelector(
                IApprovalRegistry.ReviewDeadlineTooFar.selector, d.deadline, block.timestamp + MAX_DECISION_LIFETIME
            );
        }
        if (field == 6) {
            // Another department (B: of this stage; C: of the next one) or none: A's wallet or key is not theirs.
            uint16[3] memory others = [uint16(2), 3, 99];
            d.departmentId = others[value % 3];
            if (!bySig) return abi.encodeWithSelector(IApprovalRegistry.NotADepartment.selector, wallets[0]);
            if (d.departmentId == 99) return abi.encodeWithSelector(IApprovalRegistry.DepartmentUnknownId.selector, 99);
            return abi.encodeWithSelector(
                IApprovalRegistry.ReviewInvalidSignature.selector, d.departmentId, wallets[d.departmentId - 1]
            );
        }
        return "";
    }

    /// @dev The documents of `d` made wrong: one hash replaced (by the older version of document 1, another document's
    /// latest hash or a hash never anchored), the last one left out, one too many, or two swapped.
    function _spoilDocuments(IApprovalRegistry.Decision memory d, uint256 value, bytes32 olderVersion)
        internal
        view
        returns (bytes memory)
    {
        uint16 mask = d.reviewedMask == 0 ? 7 : d.reviewedMask;
        uint8[3] memory covered;
        uint256 n;
        for (uint8 i = 0; i < 3; ++i) {
            if ((mask >> i) & 1 == 1) covered[n++] = i;
        }
        bytes32[] memory given = d.documents;
        uint256 how = value % 4;
        if (how == 3 && n < 2) how = 0;
        if (how == 0) {
            uint256 k = (value >> 2) % n;
            uint256 pick = (value >> 8) % 3;
            bytes32 wrong = pick == 0 ? olderVersion
                : pick == 1 ? _docs[d.tokenId][(covered[k] + 1) % 3] : keccak256(abi.encode("never anchored", value));
            given[k] = wrong;
            return abi.encodeWithSelector(IApprovalRegistry.ReviewStaleDocuments.selector, d.tokenId, covered[k], wrong);
        }
        if (how == 1) {
            bytes32[] memory shorter = new bytes32[](n - 1);
            for (uint256 i = 0; i + 1 < n; ++i) shorter[i] = given[i];
            d.documents = shorter;
            return abi.encodeWithSelector(
                IApprovalRegistry.ReviewStaleDocuments.selector, d.tokenId, covered[n - 1], bytes32(0)
            );
        }
        if (how == 2) {
            bytes32 extra = keccak256(abi.encode("one too many", value));
            bytes32[] memory longer = new bytes32[](n + 1);
            for (uint256 i = 0; i < n; ++i) longer[i] = given[i];
            longer[n] = extra;
            d.documents = longer;
            return abi.encodeWithSelector(IApprovalRegistry.ReviewStaleDocuments.selector, d.tokenId, 3, extra);
        }
        (given[0], given[1]) = (given[1], given[0]);
        return abi.encodeWithSelector(IApprovalRegistry.ReviewStaleDocuments.selector, d.tokenId, covered[0], given[0]);
    }

    /// @dev The documents an approval in the reopening test covers: 0 (both), document 0 or document 1.
    function _reviewed(uint256 seed, uint256 i) internal pure returns (uint16) {
        return uint16((seed >> (16 + 2 * i)) % 4);
    }

    /// @dev A key proof of kind 0..2: valid; 3: by another key; 4: for another code; 5: for the other custody;
    /// 6: naming another wallet; 7: garbage (empty, or 65 random bytes).
    function _proofOfKind(
        uint256 kind,
        uint256 key,
        bytes32 code,
        address wallet,
        IApprovalRegistry.Custody custody,
        uint256 seed
    ) internal view returns (bytes memory) {
        if (kind == 7) {
            return seed % 2 == 0 ? bytes("")
                : abi.encodePacked(keccak256(abi.encode(seed)), keccak256(abi.encode(seed, 1)), uint8(27 + (seed >> 1) % 2));
        }
        uint256 signingKey = kind == 3 ? h.strangerKey() : key;
        bytes32 signedCode = kind == 4 ? keccak256(abi.encode("another code", code)) : code;
        uint8 signedCustody = kind == 5 ? 1 - uint8(custody) : uint8(custody);
        address signedWallet = kind == 6 ? address(uint160(wallet) ^ 1) : wallet;
        return Typed.sign(vm, signingKey, Typed.keyDigest(separator, signedCode, signedWallet, signedCustody));
    }

    function _split(uint256 subset) internal pure returns (uint8[] memory first, uint8[] memory second) {
        uint256 n;
        for (uint256 i = 0; i < 6; ++i) n += (subset >> i) & 1;
        first = new uint8[](n);
        second = new uint8[](6 - n);
        uint256 a;
        uint256 b;
        for (uint256 i = 0; i < 6; ++i) {
            if ((subset >> i) & 1 == 1) first[a++] = uint8(i);
            else second[b++] = uint8(i);
        }
    }

    function _permutation(uint256 seed, uint256 n) internal pure returns (uint8[] memory out) {
        uint8[6] memory order = [0, 1, 2, 3, 4, 5];
        for (uint256 i = 0; i < 6; ++i) {
            uint256 j = i + uint256(keccak256(abi.encode(seed, i))) % (6 - i);
            (order[i], order[j]) = (order[j], order[i]);
        }
        out = new uint8[](n);
        for (uint256 i = 0; i < n; ++i) out[i] = order[i];
    }

    function _decisionOf(uint256 kind) internal pure returns (uint8) {
        return kind == 0 ? D_APPROVED : kind == 1 ? D_REJECTED : D_CHANGES;
    }

}

// =========================================================================================================
// (b) Invariant tests: the handler drives the platform; every check below recomputes what the contracts
// should hold from the handler's ghost data (its own log of calls and the workflow shapes it registered).
// =========================================================================================================

contract PlatformInvariantTest is TestBase {
    using Str for uint256;

    PlatformHandler internal handler;
    LicenceToken internal token;
    DocumentRegistry internal documents;
    ApprovalRegistry internal registry;

    function setUp() public {
        handler = new PlatformHandler(true);
        token = handler.token();
        documents = handler.documents();
        registry = handler.registry();
        targetContract(address(handler));
    }

    /// @notice Every invariant below, checked after every call of each sequence the handler makes. One campaign for
    /// all of them: each invariant is checked against as many states as a campaign of its own would give it, and the
    /// sequences are not replayed once per invariant.
    function invariant_platform() public view {
        _tokensNeverMove();
        _approvedIffEveryStageCompleted();
        _contractsMatchReferenceModel();
        _stageOnlyGoesBackOnDocumentUpdate();
        _documentUpdateInvalidatesReviewers();
        _onlyDepartmentWalletsChangeDecisions();
        _noDecisionByAWalletInsideItsDelay();
        _everyDecisionConsumesItsNonce();
        _noIssuedLicenceWithoutCompleteStages();
    }

    /// @notice No token ever moves: every token is owned by the address it was minted to, every applicant's
    /// balance is the number minted to it, and no transfer or approval path ever succeeded.
    function _tokensNeverMove() internal view {
        uint256[] memory ids = handler.ids();
        for (uint256 i = 0; i < ids.length; ++i) {
            require(token.ownerOf(ids[i]) == handler.ghostOwner(ids[i]), string.concat("owner of ", ids[i].u()));
            require(token.locked(ids[i]), "not locked");
        }
        for (uint256 a = 0; a < handler.applicantCount(); ++a) {
            address applicant = handler.applicants(a);
            require(token.balanceOf(applicant) == handler.ghostBalance(applicant), "balance != minted");
        }
        _noViolation(V_TRANSFER);
    }

    /// @notice A licence is Approved (or Suspended / Revoked, which only follow Approved) iff (1) the reference
    /// model, replaying the handler's log against the workflow shape the handler registered, says every stage
    /// met its completion rule through decisions of the right department wallets in the right order, and
    /// (2) every stage's decisions as the registry reports them meet that stage's rule; every Approved
    /// position of an issued licence was set by its own department's wallet, in that stage, with that mask.
    function _approvedIffEveryStageCompleted() internal view {
        uint256[] memory ids = handler.ids();
        for (uint256 i = 0; i < ids.length; ++i) {
            uint256 id = ids[i];
            (M memory m, GStage[] memory stages, Ev[] memory log) = _model(id);
            _noMismatch(id, m, log);
            uint8 status = uint8(token.licence(id).status);
            bool issued = status == S_APPROVED || status == S_SUSPENDED || status == S_REVOKED;
            require(issued == m.issued, string.concat("token ", id.u(), ": issued differs from the model"));

            bool everyStageComplete = registry.progressOf(id).phase != IApprovalRegistry.Phase.NotStarted;
            for (uint256 s = 0; s < stages.length && everyStageComplete; ++s) {
                (uint16[] memory depts, IApprovalRegistry.DecisionStatus[] memory sts, uint16[] memory masks) =
                    registry.decisionsOf(id, uint8(s));
                require(depts.length == stages[s].count, "stage size");
                uint8[8] memory statuses;
                for (uint256 p = 0; p < depts.length; ++p) {
                    statuses[p] = uint8(sts[p]);
                    if (issued && statuses[p] == D_APPROVED) {
                        require(
                            _approvedBy(log, stages[s].departments[p], uint8(s), masks[p]),
                            string.concat("token ", id.u(), ": an approval no department wallet made")
                        );
                    }
                }
                everyStageComplete = RefModel.stageComplete(stages[s], statuses);
            }
            require(
                issued == everyStageComplete,
                string.concat("token ", id.u(), issued ? ": issued with a stage incomplete" : ": complete but not issued")
            );
        }
    }

    /// @notice Differential check: the contracts' state of every request equals the reference model's
    /// (licence status, reason, expiry; review phase, stage, furthest stage, clock; every decision and mask of
    /// every stage; document phase, count and versions).
    function _contractsMatchReferenceModel() internal view {
        uint256[] memory ids = handler.ids();
        for (uint256 i = 0; i < ids.length; ++i) {
            uint256 id = ids[i];
            (M memory m, GStage[] memory stages, Ev[] memory log) = _model(id);
            _noMismatch(id, m, log);
            string memory t = string.concat("token ", id.u(), ": ");

            ILicenceToken.Licence memory licence = token.licence(id);
            require(uint8(licence.status) == m.status, string.concat(t, "status ", uint256(uint8(licence.status)).u(), " model ", uint256(m.status).u()));
            require(licence.reasonCode == m.reason, string.concat(t, "reason code"));
            require(licence.expiresAt == m.expiresAt, string.concat(t, "expiry"));
            require(licence.workflowId == handler.ghostWorkflowOf(id), string.concat(t, "pinned workflow"));

            IApprovalRegistry.Progress memory progress = registry.progressOf(id);
            require(uint8(progress.phase) == m.phase, string.concat(t, "phase ", uint256(uint8(progress.phase)).u(), " model ", uint256(m.phase).u()));
            if (m.phase != P_NOT_STARTED) {
                require(progress.workflowId == handler.ghostWorkflowOf(id), string.concat(t, "progress workflow"));
                require(progress.stage == m.stage, string.concat(t, "stage ", uint256(progress.stage).u(), " model ", uint256(m.stage).u()));
                require(progress.maxStage == m.maxStage, string.concat(t, "max stage"));
                if (m.phase == P_IN_REVIEW) {
                    require(progress.stageStartedAt == m.startedAt, string.concat(t, "stage clock"));
                    require((progress.flags & 1 == 1) == m.timeoutHandled, string.concat(t, "timeout flag"));
                }
                for (uint256 s = 0; s < stages.length; ++s) {
                    (uint16[] memory depts, IApprovalRegistry.DecisionStatus[] memory sts, uint16[] memory masks) =
                        registry.decisionsOf(id, uint8(s));
                    require(depts.length == stages[s].count, string.concat(t, "stage size"));
                    for (uint256 p = 0; p < depts.length; ++p) {
                        string memory at = string.concat(t, "stage ", s.u(), " position ", p.u());
                        require(depts[p] == stages[s].departments[p], string.concat(at, ": department"));
                        require(
                            uint8(sts[p]) == m.st[s][p],
                            string.concat(at, ": decision ", decisionName(uint8(sts[p])), " model ", decisionName(m.st[s][p]))
                        );
                        require(masks[p] == m.mk[s][p], string.concat(at, ": reviewed mask"));
                    }
                }
            }

            (IDocumentRegistry.Phase docPhase, uint8 count, uint16[] memory versions) = documents.documentsOf(id);
            uint16[] memory ghostVersions = handler.versionsOf(id);
            require(uint8(docPhase) == m.docPhase, string.concat(t, "document phase ", uint256(uint8(docPhase)).u(), " model ", uint256(m.docPhase).u()));
            require(count == m.docCount && count == ghostVersions.length, string.concat(t, "document count"));
            for (uint256 d = 0; d < count; ++d) {
                require(versions[d] == ghostVersions[d], string.concat(t, "document version"));
            }
        }
        _noViolation(V_WIRING);
    }

    /// @notice A stage never goes backwards except on a document update or a document added under review
    /// (StageReopened), and only moves forward on a department's approval. The handler records the stage of every
    /// request around every action.
    function _stageOnlyGoesBackOnDocumentUpdate() internal view {
        _noViolation(V_STAGE);
    }

    /// @notice After a document update, every approval (in any stage reached) that reviewed the updated
    /// document is ReviewRequired, keeping its mask; approvals that did not review it are untouched. After a document
    /// is added under review (in whatever stage the request is), every approval of every stage reached is
    /// ReviewRequired, keeping its mask.
    function _documentUpdateInvalidatesReviewers() internal view {
        _noViolation(V_INVALIDATION);
    }

    /// @notice Only department wallets' successful calls ever set a decision, each on its own position in the
    /// current stage; other actions only reset decisions the specification says they reset.
    function _onlyDepartmentWalletsChangeDecisions() internal view {
        _noViolation(V_DECISION);
    }

    /// @notice No decision by a wallet that was not the department's for the whole delay, unless the department's
    /// previous wallet, holding its own key, consented. The handler proposes (as governance, or refused: the
    /// administrator or a stranger; with a valid or a wrong key proof), consents to, cancels and activates department
    /// wallet changes at fuzzed times (one second early, when due, later) and decides from current, replaced and
    /// merely proposed wallets. Every successful decision came from the current wallet of a department as the handler
    /// saw it registered or activated, and a wallet that was proposed decided only once its proposal was WALLET_DELAY
    /// old or its department-held predecessor had consented; a change took effect exactly when governance had proposed
    /// it with the wallet's key proof and it was due (or so consented) and the wallet free of roles and departments;
    /// the registry's wallets, custodies and pending changes are the ones the handler saw proposed, consented to and
    /// activated, and no department wallet holds a role on any of the three contracts.
    function _noDecisionByAWalletInsideItsDelay() internal view {
        _noViolation(V_WALLET);
        uint40 delay = registry.walletDelay();
        require(delay == handler.WALLET_DELAY(), "wallet delay");
        address[3] memory governed = [address(registry), address(token), address(documents)];
        bytes32[4] memory roles = [bytes32(0), handler.ADMIN_ROLE(), handler.OPERATOR_ROLE(), handler.KEEPER_ROLE()];
        for (uint16 d = 1; d <= handler.DEPARTMENTS(); ++d) {
            IApprovalRegistry.DepartmentRecord memory r = registry.departmentRecord(d);
            string memory at = string.concat("department ", uint256(d).u());
            require(r.wallet == handler.ghostWalletOf(d), string.concat(at, ": wallet differs from the one activated"));
            require(r.custody == handler.ghostCustodyOf(d), string.concat(at, ": custody differs from the one activated"));
            require(r.pendingWallet == handler.ghostPendingWallet(d), string.concat(at, ": pending wallet"));
            if (r.pendingWallet != address(0)) {
                require(
                    r.pendingEffectiveAt == handler.ghostPendingAt(d) + delay,
                    string.concat(at, ": a pending change takes effect before its proposal time + the delay")
                );
                require(r.pendingCustody == handler.ghostPendingCustody(d), string.concat(at, ": pending custody"));
                require(r.pendingConsented == handler.ghostPendingConsented(d), string.concat(at, ": consent"));
            }
            for (uint256 c = 0; c < 3; ++c) {
                for (uint256 role = 0; role < 4; ++role) {
                    require(
                        !IAccessControl(governed[c]).hasRole(roles[role], r.wallet),
                        string.concat(at, ": its wallet holds a role")
                    );
                }
            }
        }
    }

    /// @notice Every recorded decision, sent or relayed, consumed exactly its department's next nonce, and was bound
    /// to the current stage and round, the latest documents and a live deadline: the handler gets one field wrong in
    /// some decisions and relays signatures it held back while nonces, rounds and documents moved on; each was recorded
    /// exactly when everything it names still held. A department's nonce moved only by its own decisions and by its own
    /// wallet raising it (by 1 .. 2^32 - 1); the registry's nonces are the handler's count.
    function _everyDecisionConsumesItsNonce() internal view {
        _noViolation(V_NONCE);
        for (uint16 d = 1; d <= handler.DEPARTMENTS(); ++d) {
            require(
                registry.departmentRecord(d).nonce == handler.ghostNonce(d),
                string.concat("department ", uint256(d).u(), ": nonce differs from the decisions and raises it made")
            );
        }
    }

    /// @notice No issued licence without complete stages: every Approved (or later Suspended / Revoked) licence has
    /// its review closed, its documents locked and, in every stage of its pinned workflow as the registry stores it,
    /// decisions meeting that stage's rule with no approval awaiting a new review. Nobody but the approval registry
    /// ever moved a token or a document phase: the handler's attempts (from DEFAULT_ADMIN_ROLE, the administrator,
    /// the operator, the keeper, a department wallet, a stranger) to transition, issue, set the active workflow,
    /// set a document phase, rewire the contracts or give a department wallet a role all reverted.
    function _noIssuedLicenceWithoutCompleteStages() internal view {
        _noViolation(V_LIFECYCLE);
        uint256[] memory ids = handler.ids();
        for (uint256 i = 0; i < ids.length; ++i) {
            uint256 id = ids[i];
            ILicenceToken.Licence memory licence = token.licence(id);
            bool issued = licence.status == ILicenceToken.Status.Approved
                || licence.status == ILicenceToken.Status.Suspended || licence.status == ILicenceToken.Status.Revoked;
            if (!issued) continue;
            string memory t = string.concat("token ", id.u(), ": ");
            require(registry.progressOf(id).phase == IApprovalRegistry.Phase.Closed, string.concat(t, "review not closed"));
            (IDocumentRegistry.Phase docPhase,,) = documents.documentsOf(id);
            require(docPhase == IDocumentRegistry.Phase.Locked, string.concat(t, "documents not locked"));
            uint8 stageCount = registry.workflow(licence.workflowId).stageCount;
            for (uint8 s = 0; s < stageCount; ++s) {
                IApprovalRegistry.Stage memory definition = registry.stage(licence.workflowId, s);
                (, IApprovalRegistry.DecisionStatus[] memory sts,) = registry.decisionsOf(id, s);
                uint256 approved;
                for (uint256 p = 0; p < sts.length; ++p) {
                    require(
                        sts[p] != IApprovalRegistry.DecisionStatus.ReviewRequired,
                        string.concat(t, "issued with an approval awaiting review in stage ", uint256(s).u())
                    );
                    if (sts[p] == IApprovalRegistry.DecisionStatus.Approved) approved += 1;
                    else if ((definition.mandatoryMask >> p) & 1 == 1) revert(string.concat(t, "mandatory department missing"));
                }
                bool complete = definition.completion == IApprovalRegistry.Completion.All
                    ? approved == definition.departmentCount
                    : definition.completion == IApprovalRegistry.Completion.Any ? approved >= 1 : approved >= definition.threshold;
                require(complete, string.concat(t, "issued with stage ", uint256(s).u(), " incomplete"));
            }
        }
    }

    /// @notice After each run: the run exercised the platform (some fuzzed call succeeded), and the issued-licence
    /// side of the Approved-iff invariant is covered (the bootstrap issues token 1; about half the runs issue
    /// more through fuzzed calls, see PlatformHandlerProgressTest for a deterministic path).
    function afterInvariant() public view {
        require(handler.ghostIssued() >= 1, "no licence was ever issued");
        require(handler.ghostFuzzSuccesses() >= 1, "no fuzzed call succeeded: the handler is not driving anything");
    }

    // ------------------------------------------------------------------------------ helpers

    function _model(uint256 id) internal view returns (M memory m, GStage[] memory stages, Ev[] memory log) {
        uint32 workflowId = handler.ghostWorkflowOf(id);
        stages = handler.stagesOf(workflowId);
        log = handler.logOf(id);
        m = RefModel.replay(log, stages, handler.ghostValidity(workflowId));
    }

    function _noMismatch(uint256 id, M memory m, Ev[] memory log) internal pure {
        if (m.firstMismatch == 0) return;
        Ev memory e = log[m.firstMismatch - 1];
        revert(
            string.concat(
                "token ", id.u(), ": call #", (m.firstMismatch - 1).u(), " (", kindName(e.kind), ", a ",
                uint256(e.a).u(), ", department ", uint256(e.dept).u(), ", stage ", uint256(e.stage).u(),
                e.ok ? ") succeeded but the specification forbids it" : ") reverted but the specification allows it"
            )
        );
    }

    function _noViolation(uint8 category) internal view {
        uint256 n = handler.violations(category);
        if (n != 0) revert(string.concat(n.u(), " violation(s), first: ", handler.firstViolation(category)));
    }

    function _approvedBy(Ev[] memory log, uint16 dept, uint8 stageIndex, uint16 mask) internal pure returns (bool) {
        for (uint256 i = log.length; i > 0; --i) {
            Ev memory e = log[i - 1];
            if (e.ok && e.kind == K_DECIDE && e.a == D_APPROVED && e.dept == dept && e.stage == stageIndex) {
                return e.mask == mask;
            }
        }
        return false;
    }
}

/// @notice Deterministic check that the handler's own fuzzable actions can drive requests through their
/// workflows: a document update reopens stage 0 of token 2, then "approve whoever's turn it is" issues every
/// request under review; the reference model agrees with the contracts all along.
contract PlatformHandlerProgressTest is TestBase {
    using Str for uint256;

    PlatformHandler internal handler;

    function setUp() public {
        handler = new PlatformHandler(true);
    }

    function test_handlerActionsReopenAndIssue() public {
        ApprovalRegistry registry = handler.registry();
        LicenceToken token = handler.token();
        require(registry.progressOf(2).stage == 1, "bootstrap: token 2 in stage 1");

        // New version of document 0 of token 2 (the first request under review): A and B reviewed it.
        handler.anchorVersion(0, 0, 1);
        require(handler.ghostReopens() == 1 && registry.progressOf(2).stage == 0, "stage 0 of token 2 not reopened");
        (, IApprovalRegistry.DecisionStatus[] memory statuses,) = registry.decisionsOf(2, 0);
        require(
            statuses[0] == IApprovalRegistry.DecisionStatus.ReviewRequired
                && statuses[1] == IApprovalRegistry.DecisionStatus.ReviewRequired,
            "stage 0 approvals not invalidated"
        );

        // Seeds 0: first request under review, first department whose turn it is.
        for (uint256 i = 0; i < 12 && handler.ghostIssuedByFuzz() < 3; ++i) handler.approveNext(0, 0, 0);
        require(handler.ghostIssuedByFuzz() == 3, "requests 2, 3 and 5 not all issued");
        for (uint256 id = 1; id <= 5; ++id) {
            uint8 expected = id == 4 ? S_DRAFT : S_APPROVED;
            require(uint8(token.licence(id).status) == expected, string.concat("status of token ", id.u()));
            uint32 workflowId = handler.ghostWorkflowOf(id);
            M memory m = RefModel.replay(handler.logOf(id), handler.stagesOf(workflowId), handler.ghostValidity(workflowId));
            require(m.firstMismatch == 0 && m.status == expected, string.concat("model of token ", id.u()));
        }
        for (uint8 category = V_TRANSFER; category <= V_LAST; ++category) {
            require(handler.violations(category) == 0, handler.firstViolation(category));
        }
    }

    /// @notice The handler's wallet actions: a wallet proposed for department B (whose turn it is on token 5) cannot
    /// decide, nor be activated one second before its delay; once activated when due it decides and B's old wallet
    /// cannot; the lifecycle attacks of every actor revert.
    function test_handlerRotatesWalletsAfterTheDelayOnly() public {
        ApprovalRegistry registry = handler.registry();
        address spare = handler.spareWallets(0);
        address old = handler.deptWallets(1);
        IApprovalRegistry.Decision memory asB = _decisionOfB(registry);

        handler.proposeWallet(1, 0, 1); // governance proposes spare wallet 0 for department 2 (B)
        require(handler.ghostPendingWallet(2) == spare, "proposal not made");
        vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.NotADepartment.selector, spare));
        vm.prank(spare);
        registry.decide(asB);
        handler.activateWallet(1, 3); // one second before it is due: refused
        require(registry.departmentRecord(2).wallet == old, "activated before the delay");
        handler.activateWallet(1, 2); // when due
        require(registry.departmentRecord(2).wallet == spare && handler.ghostWalletsRotated() == 1, "not activated");
        asB.deadline = uint64(block.timestamp);
        vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.NotADepartment.selector, old));
        vm.prank(old);
        registry.decide(asB);

        for (uint256 i = 0; i < 12 && handler.ghostIssuedByFuzz() < 3; ++i) handler.approveNext(0, 0, 0);
        require(handler.ghostIssuedByFuzz() == 3, "requests 2, 3 and 5 not all issued");
        require(handler.ghostDecisionsByRotatedWallets() == 1, "the new wallet of B did not decide");
        for (uint256 seed = 0; seed < 56; ++seed) handler.tryDriveLifecycle(seed, seed / 8, seed);
        require(handler.ghostLifecycleAttempts() == 56, "lifecycle attacks not attempted");
        _noViolations();
    }

    /// @notice The handler's consent path: department A (custodial) consents to its wallet change, which still waits
    /// for its delay; department B (holding its own key) consents and its new wallet takes over at once and decides.
    function test_handlerConsentWaivesTheDelayOnlyForDepartmentHeldWallets() public {
        ApprovalRegistry registry = handler.registry();
        handler.proposeWallet(0, 0, 1); // spare wallet 0 for A (custodial)
        handler.consentWallet(0, 1); // by A's current wallet
        require(registry.departmentRecord(1).pendingConsented, "A's consent not recorded");
        handler.activateWallet(0, 0); // at once: refused, the platform's consent waives nothing
        require(registry.departmentRecord(1).wallet == handler.deptWallets(0), "a custodial consent waived the delay");

        handler.proposeWallet(1, 1, 1); // spare wallet 1 for B (department-held)
        handler.consentWallet(1, 1);
        handler.activateWallet(1, 0); // at once
        require(registry.departmentRecord(2).wallet == handler.spareWallets(1), "B's consented change not activated");
        require(handler.ghostDelaysWaived() == 1, "delay not waived");
        // B's turn on token 5: its new wallet decides before the proposal is a day old.
        for (uint256 i = 0; i < 12 && handler.ghostIssuedByFuzz() < 3; ++i) handler.approveNext(0, 0, 0);
        require(handler.ghostDecisionsByRotatedWallets() == 1, "the new wallet of B did not decide");
        _noViolations();
    }

    /// @notice The handler's signature paths: a signature held back is relayed once (the second relay is a replay);
    /// a department's nonce raise voids the one it held back; a relayed decision with one field wrong is refused.
    function test_handlerHeldSignaturesAndNonceRaises() public {
        ApprovalRegistry registry = handler.registry();
        // Token 2 is in stage 1 (C, D, E; D mandatory, threshold 2): C signs an approval and keeps it.
        handler.signForLater(0, 0, 0, 0);
        require(handler.heldCount() == 1, "not held");
        handler.relayHeld(0, 0);
        require(registry.departmentRecord(3).nonce == 1 && handler.ghostSignedDecisionsOk() == 1, "C's signature not relayed");
        handler.relayHeld(0, 1); // the same signature again: refused
        require(registry.departmentRecord(3).nonce == 1 && handler.ghostDecisionsRefused() == 1, "a replay landed");

        // D (nonce 1: it approved token 1), whose turn it is now, signs, then raises its nonce to 2: the held
        // signature is void.
        handler.signForLater(0, 0, 0, 0);
        handler.increaseNonce(3, 3, 1);
        require(handler.ghostNonceIncreases() == 1 && registry.departmentRecord(4).nonce == 2, "D's raise");
        handler.relayHeld(1, 0);
        (, IApprovalRegistry.DecisionStatus[] memory statuses,) = registry.decisionsOf(2, 1);
        require(statuses[1] == IApprovalRegistry.DecisionStatus.Pending, "a voided signature decided");

        // A relayed decision naming a passed deadline (how: relayed, wrong field 4): refused, nothing consumed.
        handler.approveNext(0, 0, uint256(1 | (14 << 1)) << 128);
        require(handler.ghostUnboundRefused() == 3 && registry.departmentRecord(4).nonce == 2, "an expired decision landed");
        // Sent properly, D's approval lands at nonce 2.
        handler.approveNext(0, 0, 0);
        require(registry.departmentRecord(4).nonce == 3, "D's decision at its raised nonce");
        _noViolations();
    }

    /// @dev Department B's approval of token 5 (B's turn), every document, B's next nonce, deadline now.
    function _decisionOfB(ApprovalRegistry registry) internal view returns (IApprovalRegistry.Decision memory) {
        IApprovalRegistry.Progress memory progress = registry.progressOf(5);
        return IApprovalRegistry.Decision({
            tokenId: 5,
            departmentId: 2,
            stage: progress.stage,
            round: progress.stageStartedAt,
            decision: IApprovalRegistry.DecisionStatus.Approved,
            reasonCode: 0,
            reviewedMask: 0,
            documents: handler.latestHashesOf(5),
            remarksHash: bytes32(0),
            nonce: registry.departmentRecord(2).nonce,
            deadline: uint64(block.timestamp)
        });
    }

    function _noViolations() internal view {
        for (uint8 category = V_TRANSFER; category <= V_LAST; ++category) {
            require(handler.violations(category) == 0, handler.firstViolation(category));
        }
    }
}

// =========================================================================================================
// (c) Signing domains: every deployment has its own.
// =========================================================================================================

/// @notice A second, identical platform on the same chain (same department keys, codes and ids): its registry's
/// domain differs by address and salt, and no signature crosses between the two.
contract PlatformDomainTest is PlatformFixture {
    PlatformHandler internal other;
    ApprovalRegistry internal otherRegistry;

    function setUp() public {
        _deploy();
        other = new PlatformHandler(false);
        otherRegistry = other.registry();
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](1);
        stages[0] = _input(EX_PARALLEL, C_ALL, 0, _one(0));
        _register("DOMAIN", stages);
        _mintAndSubmit(80, "DOMAIN", 2);
    }

    /// @notice eip712Domain() reports the documented domain: fields 0x1f, name "LicenceApprovalRegistry", version
    /// "2", this chain, the registry itself and a salt; the second deployment's salt differs, and both have the same
    /// department wallets (so only the domain keeps their signatures apart).
    function test_eachDeploymentHasItsOwnDomain() public view {
        Typed.Domain memory mine = Typed.domainOf(registry);
        Typed.Domain memory theirs = Typed.domainOf(otherRegistry);
        require(keccak256(bytes(mine.name)) == keccak256("LicenceApprovalRegistry"), "domain name");
        require(keccak256(bytes(mine.version)) == keccak256("2"), "domain version");
        require(mine.chainId == block.chainid && mine.verifyingContract == address(registry), "chain or contract");
        require(theirs.verifyingContract == address(otherRegistry), "other verifying contract");
        require(mine.salt != bytes32(0) && theirs.salt != mine.salt, "the two deployments share a salt");
        (, address theirWallet,) = otherRegistry.departmentByCode(codes[0]);
        require(theirWallet == wallets[0], "the deployments should share department wallets");
    }

    /// @notice A decision or a key proof signed under any other domain is refused: the other deployment's (another
    /// address and salt), this registry's address with the other deployment's salt or any other salt, another
    /// chain id, the previous version "1", no salt field, or the other registry's address with this salt. The other
    /// deployment accepts its own domain's signature as the department's; under this registry's own domain the same
    /// decision or proof is accepted here and refused there.
    function testFuzz_signatureUnderAnotherDomainRefused(uint256 seed, bytes32 salt, uint256 chainId) public {
        bytes32 wrongSeparator = _otherSeparator(seed % 7, salt, chainId);
        require(wrongSeparator != separator, "not another domain");
        if ((seed >> 3) % 2 == 0) {
            IApprovalRegistry.Decision memory d = _decision(80, 1, D_APPROVED, 0);
            bytes memory signature = Typed.sign(vm, keys[0], Typed.decisionDigest(wrongSeparator, d));
            bytes memory refused =
                abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidSignature.selector, 1, wallets[0]);
            vm.expectRevert(refused);
            vm.prank(stranger);
            registry.decideBySig(d, signature);
            require(_nonceOf(1) == 0 && _statusOf(80) == S_SUBMITTED, "refused decision left a trace");
            if (seed % 7 == 0) {
                // Under its own domain the other registry takes the signature as A's, and stops only because
                // request 80 is not under review there.
                vm.expectRevert(
                    abi.encodeWithSelector(
                        IApprovalRegistry.ReviewWrongPhase.selector, 80, IApprovalRegistry.Phase.NotStarted
                    )
                );
                vm.prank(stranger);
                otherRegistry.decideBySig(d, signature);
            }
            bytes memory good = _sign(keys[0], d);
            vm.prank(stranger);
            registry.decideBySig(d, good);
            require(_nonceOf(1) == 1 && _statusOf(80) == S_APPROVED, "the decision under this domain did not land");
            vm.expectRevert(refused);
            vm.prank(stranger);
            otherRegistry.decideBySig(d, good);
        } else {
            uint256 key = keyOf(abi.encode("domain test wallet", seed));
            address wallet = vm.addr(key);
            IApprovalRegistry.Custody custody = IApprovalRegistry.Custody((seed >> 4) & 1);
            bytes memory proof = Typed.sign(vm, key, Typed.keyDigest(wrongSeparator, "NEW_DEPT", wallet, uint8(custody)));
            vm.expectRevert(
                abi.encodeWithSelector(IApprovalRegistry.DepartmentInvalidKeyProof.selector, bytes32("NEW_DEPT"), wallet)
            );
            vm.prank(governance);
            registry.registerDepartment("NEW_DEPT", wallet, custody, proof);
            bytes memory good = _keyProof(key, "NEW_DEPT", wallet, custody);
            vm.prank(governance);
            require(registry.registerDepartment("NEW_DEPT", wallet, custody, good) == 7, "proof under this domain");
            address otherGovernance = other.governance();
            vm.expectRevert(
                abi.encodeWithSelector(IApprovalRegistry.DepartmentInvalidKeyProof.selector, bytes32("NEW_DEPT"), wallet)
            );
            vm.prank(otherGovernance);
            otherRegistry.registerDepartment("NEW_DEPT", wallet, custody, good);
        }
    }

    /// @dev The separator of a domain that is not this registry's: 0 the other deployment's; 1 this address with
    /// the other deployment's salt; 2 any other salt; 3 another chain id; 4 version "1"; 5 no salt; 6 the other
    /// registry's address with this salt.
    function _otherSeparator(uint256 variant, bytes32 salt, uint256 chainId) internal view returns (bytes32) {
        Typed.Domain memory mine = Typed.domainOf(registry);
        if (variant == 0) return Typed.separatorOf(otherRegistry);
        if (variant == 5) return Typed.separatorWithoutSalt(mine);
        Typed.Domain memory d = Typed.Domain(mine.name, mine.version, mine.chainId, mine.verifyingContract, mine.salt);
        if (variant == 1) d.salt = Typed.domainOf(otherRegistry).salt;
        else if (variant == 2) d.salt = salt == mine.salt ? ~salt : salt;
        else if (variant == 3) d.chainId = chainId == mine.chainId ? chainId + 1 : chainId;
        else if (variant == 4) d.version = "1";
        else d.verifyingContract = address(otherRegistry);
        return Typed.separator(d);
    }
}
