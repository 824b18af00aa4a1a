// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {TestBase} from "./Vm.sol";
import "./PlatformHandler.sol";
import {StageLedger} from "../../contracts/libraries/StageLedger.sol";

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

/// @dev Version 1 of document 0 in the document registry's packed layout (15 bits per index from bit 16): what a
/// department names when it reviewed only document 0, never updated. Only the reviewed documents' bits are compared.
uint256 constant DOC0_V1 = 1 << 16;
/// @dev The order of secp256k1: private keys are 1..n-1.
uint256 constant SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;

/// @notice Shared setup for the fuzz tests: the platform wired as in production (through the handler,
/// without its bootstrap), departments DEPT_A..DEPT_F registered with ids 1..6.
abstract contract PlatformFixture is TestBase {
    using Str for uint256;

    PlatformHandler internal h;
    LicenceToken internal token;
    DocumentRegistry internal documents;
    ApprovalRegistry internal registry;
    address internal admin;
    address internal operator;
    address internal keeper;
    address internal stranger;
    address[6] internal wallets;
    bytes32[6] internal codes;
    uint256 private _hashNonce;

    function _deploy() internal {
        h = new PlatformHandler(false);
        token = h.token();
        documents = h.documents();
        registry = h.registry();
        admin = h.admin();
        operator = h.operator();
        keeper = h.keeper();
        stranger = h.stranger();
        for (uint256 i = 0; i < 6; ++i) {
            wallets[i] = h.deptWallets(i);
            codes[i] = h.deptCodes(i);
        }
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
        vm.prank(admin);
        id = registry.registerWorkflow(requestType, keccak256("definition"), 365 days, stages);
    }

    function _mintAndSubmit(uint256 id, bytes32 requestType, uint256 docCount) internal {
        address applicant = h.applicants(0);
        vm.prank(operator);
        token.mint(applicant, id, requestType, bytes32(0));
        for (uint256 i = 0; i < docCount; ++i) {
            vm.prank(operator);
            documents.anchorDocument(id, bytes16(uint128(i + 1)), "DOC", _freshHash());
        }
        vm.prank(operator);
        registry.submit(id);
    }

    function _freshHash() internal returns (bytes32) {
        return keccak256(abi.encode("fuzz document", ++_hashNonce));
    }

    function _statusOf(uint256 id) internal view returns (uint8) {
        return uint8(token.licence(id).status);
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
    /// department wallet, a role holder or any address) can decide in stage 0 iff it is the wallet of a
    /// department of stage 0; once stage 0 completes, only stage 1's departments can.
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
            address[5] memory others = [operator, admin, keeper, stranger, h.applicants(0)];
            caller = others[(seed >> 9) % 5];
        }
        uint256 departmentIndex = 6;
        for (uint256 i = 0; i < 6; ++i) {
            if (wallets[i] == caller) departmentIndex = i;
        }
        bool inStage0 = departmentIndex < 6 && (subset >> departmentIndex) & 1 == 1;
        uint256 kind = (seed >> 12) % 3;

        if (!inStage0) vm.expectRevert();
        vm.prank(caller);
        _decideAs(kind, 10);

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
        if (!inStage1) vm.expectRevert();
        vm.prank(wallets[other]);
        _decideAs(0, 10);
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
            registry.approve(20, 1, DOC0_V1, bytes32(0));
            if (pos == next) ++next;
            if (next < n) {
                uint16[] memory pending = registry.pendingDepartmentsOf(20);
                require(pending.length == 1 && pending[0] == uint16(order[next]) + 1, "pending is not the next one");
            }
        }
        for (; next < n; ++next) {
            require(_statusOf(20) == S_SUBMITTED, "approved too early");
            vm.prank(wallets[order[next]]);
            registry.approve(20, 1, DOC0_V1, bytes32(0));
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
        for (uint256 i = 0; i < approvals; ++i) {
            vm.prank(wallets[i]);
            registry.approve(30, 1, DOC0_V1, bytes32(0));
        }
        uint16[] memory pending = registry.pendingDepartmentsOf(30);
        address next = wallets[pending[(seed >> 2) % pending.length] - 1];
        bool changes = (seed >> 8) % 2 == 0;
        vm.prank(next);
        if (changes) registry.requestChanges(30, 1, DOC0_V1, bytes32(0));
        else registry.reject(30, 1, 1, DOC0_V1, bytes32(0));
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
    /// never be replayed. The digest is computed here from the type string IApprovalRegistry documents, not by the
    /// verifier, so the two must agree.
    function testFuzz_signedDecisionOnlyFromTheDepartmentKey(uint256 signerKey, uint256 seed) public {
        uint256 departmentKey = 0xD3A1;
        address wallet = vm.addr(departmentKey);
        vm.prank(admin);
        uint16 dept = registry.registerDepartment("SIGNER", wallet, IApprovalRegistry.Custody.DepartmentHeld);
        IApprovalRegistry.StageInput[] memory stages = new IApprovalRegistry.StageInput[](1);
        stages[0].executionType = IApprovalRegistry.ExecutionType.Parallel;
        stages[0].departments = new bytes32[](1);
        stages[0].departments[0] = "SIGNER";
        _register("SIGNED", stages);
        _mintAndSubmit(40, "SIGNED", 2);

        if (seed % 2 == 0) signerKey = departmentKey;
        signerKey = bound(signerKey, 1, SECP256K1_ORDER - 1);
        IApprovalRegistry.SignedDecision memory decision = IApprovalRegistry.SignedDecision({
            tokenId: 40,
            departmentId: dept,
            decision: (seed >> 1) % 2 == 0 ? IApprovalRegistry.DecisionStatus.Approved
                : IApprovalRegistry.DecisionStatus.ChangesRequested,
            reasonCode: 0,
            reviewedMask: uint16((seed >> 2) % 4),
            reviewedVersions: documents.packedDocumentsOf(40),
            remarksHash: keccak256(abi.encode(seed)),
            nonce: (seed >> 4) % 4 == 0 ? 1 : 0,
            deadline: uint64((seed >> 6) % 4 == 0 ? block.timestamp - 1 : block.timestamp + (seed >> 8) % 1 days)
        });
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(signerKey, _digest(decision));
        bytes memory signature = abi.encodePacked(r, s, v);
        bool valid = signerKey == departmentKey && decision.nonce == 0 && decision.deadline >= block.timestamp;

        if (!valid) vm.expectRevert();
        vm.prank(stranger);
        registry.decideBySig(decision, signature);
        (, IApprovalRegistry.DecisionStatus[] memory statuses,) = registry.decisionsOf(40, 0);
        require(statuses[0] == (valid ? decision.decision : IApprovalRegistry.DecisionStatus.Pending), "decision recorded");
        require(registry.departmentRecord(dept).nonce == (valid ? 1 : 0), "nonce");
        if (valid) {
            vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.ReviewInvalidNonce.selector, dept, 1, 0));
            vm.prank(operator);
            registry.decideBySig(decision, signature);
        }
    }

    // ------------------------------------------------------------------------------ document registry
    // ------------------------------------------------------------------------------ document registry

    /// @notice Random interleavings of anchors (new documents, new versions, stale or duplicate hashes) on two
    /// requests: the packed word (phase | count << 8 | 15-bit latest version per index from bit 16), documentsOf
    /// and anchorOf always agree with a plain ghost list of versions.
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
                    documents.anchorVersion(previous[t][i], _freshHash());
                } else if (op == 4) {
                    // Identical bytes cannot be anchored twice.
                    vm.expectRevert(
                        abi.encodeWithSelector(IDocumentRegistry.DocumentAlreadyAnchored.selector, latest[t][i], t)
                    );
                    vm.prank(operator);
                    documents.anchorVersion(latest[t][i], latest[t][i]);
                } else {
                    bytes32 hash = _freshHash();
                    vm.prank(operator);
                    uint16 v = documents.anchorVersion(latest[t][i], hash);
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
            (IDocumentRegistry.Anchor memory anchor, bool isLatest) = documents.anchorOf(latest[i]);
            require(
                isLatest && anchor.tokenId == id && anchor.docIndex == i && anchor.version == versions[i],
                "anchorOf latest"
            );
            if (previous[i] != bytes32(0)) {
                (anchor, isLatest) = documents.anchorOf(previous[i]);
                require(!isLatest && anchor.version == versions[i] - 1 && anchor.docIndex == i, "anchorOf previous");
            }
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

    /// @dev EIP-712 digest of a decision for the registry, from IApprovalRegistry.SignedDecision's documented type.
    function _digest(IApprovalRegistry.SignedDecision memory d) internal view returns (bytes32) {
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("LicenceApprovalRegistry"),
                keccak256("1"),
                block.chainid,
                address(registry)
            )
        );
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256(
                    "Decision(uint256 tokenId,uint16 departmentId,uint8 decision,uint8 reasonCode,uint16 reviewedMask,"
                    "uint256 reviewedVersions,bytes32 remarksHash,uint64 nonce,uint64 deadline)"
                ),
                d.tokenId, d.departmentId, uint8(d.decision), d.reasonCode, d.reviewedMask, d.reviewedVersions,
                d.remarksHash, d.nonce, d.deadline
            )
        );
        return keccak256(abi.encodePacked(hex"1901", domain, structHash));
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

    /// @dev The caller (pranked just before) decides on version 1 of document 0.
    function _decideAs(uint256 kind, uint256 id) internal {
        if (kind == 0) registry.approve(id, 1, DOC0_V1, bytes32(0));
        else if (kind == 1) registry.reject(id, 1, 1, DOC0_V1, bytes32(0));
        else registry.requestChanges(id, 1, DOC0_V1, bytes32(0));
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

    /// @notice No token ever moves: every token is owned by the address it was minted to, every applicant's
    /// balance is the number minted to it, and no transfer or approval path ever succeeded.
    function invariant_tokensNeverMove() public view {
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
    function invariant_approvedIffEveryStageCompleted() public view {
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
    function invariant_contractsMatchReferenceModel() public view {
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

    /// @notice A stage never goes backwards except on a document update (StageReopened), and only moves
    /// forward on a department's approval. The handler records the stage of every request around every action.
    function invariant_stageOnlyGoesBackOnDocumentUpdate() public view {
        _noViolation(V_STAGE);
    }

    /// @notice After a document update, every approval (in any stage reached) that reviewed the updated
    /// document is ReviewRequired, keeping its mask; approvals that did not review it are untouched.
    function invariant_documentUpdateInvalidatesReviewers() public view {
        _noViolation(V_INVALIDATION);
    }

    /// @notice Only department wallets' successful calls ever set a decision, each on its own position in the
    /// current stage; other actions only reset decisions the specification says they reset.
    function invariant_onlyDepartmentWalletsChangeDecisions() public view {
        _noViolation(V_DECISION);
    }

    /// @notice No decision by a wallet that was not the department's for the whole delay. The handler proposes,
    /// cancels and activates department wallet changes at fuzzed times (one second early, when due, later) and decides
    /// from current, replaced and merely proposed wallets. Every successful decision came from the current wallet of
    /// a department as the handler saw it registered or activated, and a wallet that was proposed decided only once
    /// its proposal was WALLET_DELAY old; no change took effect before its delay or without a proposal by an
    /// administrator; the registry's wallets and pending changes are the ones the handler saw proposed and activated.
    function invariant_noDecisionByAWalletInsideItsDelay() public view {
        _noViolation(V_WALLET);
        uint40 delay = registry.walletDelay();
        require(delay == handler.WALLET_DELAY(), "wallet delay");
        for (uint16 d = 1; d <= handler.DEPARTMENTS(); ++d) {
            IApprovalRegistry.DepartmentRecord memory r = registry.departmentRecord(d);
            string memory at = string.concat("department ", uint256(d).u());
            require(r.wallet == handler.ghostWalletOf(d), string.concat(at, ": wallet differs from the one activated"));
            require(r.pendingWallet == handler.ghostPendingWallet(d), string.concat(at, ": pending wallet"));
            if (r.pendingWallet != address(0)) {
                require(
                    r.pendingEffectiveAt == handler.ghostPendingAt(d) + delay,
                    string.concat(at, ": a pending change takes effect before its proposal time + the delay")
                );
            }
            for (uint256 role = 0; role < 4; ++role) {
                bytes32[4] memory roles =
                    [bytes32(0), handler.ADMIN_ROLE(), handler.OPERATOR_ROLE(), handler.KEEPER_ROLE()];
                require(!registry.hasRole(roles[role], r.wallet), string.concat(at, ": its wallet holds a role"));
            }
        }
    }

    /// @notice No issued licence without complete stages: every Approved (or later Suspended / Revoked) licence has
    /// its review closed, its documents locked and, in every stage of its pinned workflow as the registry stores it,
    /// decisions meeting that stage's rule with no approval awaiting a new review. Nobody but the approval registry
    /// ever moved a token or a document phase: the handler's attempts (from DEFAULT_ADMIN_ROLE, the administrator,
    /// the operator, the keeper, a department wallet, a stranger) to transition, issue, set the active workflow,
    /// set a document phase, rewire the contracts or give a department wallet a role all reverted.
    function invariant_noIssuedLicenceWithoutCompleteStages() public view {
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
        for (uint8 category = V_TRANSFER; category <= V_LIFECYCLE; ++category) {
            require(handler.violations(category) == 0, handler.firstViolation(category));
        }
    }

    /// @notice The handler's wallet actions: a wallet proposed for department B (whose turn it is on token 5) cannot
    /// decide, nor be activated one second before its delay; once activated when due it decides and B's old wallet
    /// cannot; the lifecycle attacks of every actor revert.
    function test_handlerRotatesWalletsAfterTheDelayOnly() public {
        ApprovalRegistry registry = handler.registry();
        DocumentRegistry documents = handler.documents();
        address spare = handler.spareWallets(0);
        address old = handler.deptWallets(1);
        uint256 versions = documents.packedDocumentsOf(5);

        handler.proposeWallet(1, 0, 1); // the administrator proposes spare wallet 0 for department 2 (B)
        require(handler.ghostPendingWallet(2) == spare, "proposal not made");
        vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.NotADepartment.selector, spare));
        vm.prank(spare);
        registry.approve(5, 0, versions, bytes32(0));
        handler.activateWallet(1, 3); // one second before it is due: refused
        require(registry.departmentRecord(2).wallet == old, "activated before the delay");
        handler.activateWallet(1, 2); // when due
        require(registry.departmentRecord(2).wallet == spare && handler.ghostWalletsRotated() == 1, "not activated");
        vm.expectRevert(abi.encodeWithSelector(IApprovalRegistry.NotADepartment.selector, old));
        vm.prank(old);
        registry.approve(5, 0, versions, bytes32(0));

        for (uint256 i = 0; i < 12 && handler.ghostIssuedByFuzz() < 3; ++i) handler.approveNext(0, 0, 0);
        require(handler.ghostIssuedByFuzz() == 3, "requests 2, 3 and 5 not all issued");
        require(handler.ghostDecisionsByRotatedWallets() == 1, "the new wallet of B did not decide");
        for (uint256 seed = 0; seed < 48; ++seed) handler.tryDriveLifecycle(seed, seed / 8, seed);
        require(handler.ghostLifecycleAttempts() == 48, "lifecycle attacks not attempted");
        for (uint8 category = V_TRANSFER; category <= V_LIFECYCLE; ++category) {
            require(handler.violations(category) == 0, handler.firstViolation(category));
        }
    }
}
