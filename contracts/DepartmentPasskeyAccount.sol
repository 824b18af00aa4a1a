// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {P256} from "@openzeppelin/contracts/utils/cryptography/P256.sol";

import {IDepartmentPasskeyAccount} from "./interfaces/IDepartmentPasskeyAccount.sol";
import {WebAuthnAssertion} from "./libraries/WebAuthnAssertion.sol";

/// @title DepartmentPasskeyAccount
/// @notice A department's wallet signed by its reviewers' passkeys, N of M, with no owner: no key the platform holds
/// can sign for it or change who may.
/// @dev OpenZeppelin's MultiSignerERC7913 and WebAuthn need a Cancun EVM (mcopy, through Arrays and Bytes); we
/// target London, so the threshold, the reviewer set and the assertion check are written here, on OpenZeppelin's
/// P256 and Base64. The reviewer keys are stored once each: a list for reviewers() and a 1-based position per
/// reviewerId for membership and swap-and-pop removal.
contract DepartmentPasskeyAccount is IDepartmentPasskeyAccount {
    /// @notice Most reviewers one account may have (bounds reviewers() and the constructor).
    uint256 public constant MAX_REVIEWERS = 64;

    uint256 private constant _KEY_LENGTH = 64;
    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant _DOMAIN_TYPEHASH = 0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;
    bytes32 private constant _NAME_HASH = keccak256("DepartmentPasskeyAccount");
    bytes32 private constant _VERSION_HASH = keccak256("1");
    // keccak256("ReviewerChange(bytes[] add,bytes[] remove,uint16 threshold,uint64 nonce,uint64 deadline)")
    bytes32 private constant _CHANGE_TYPEHASH = 0xd31a4443fc2b13f1cbe69cae82df4954ea9339cd3effa034aa626cf473e0ad24;

    // The reviewers' passkeys, qx ‖ qy.
    bytes[] private _keys;
    // 1-based index in _keys by keccak256(key); 0 = not a reviewer.
    mapping(bytes32 reviewerId => uint256 position) private _positions;
    // Distinct reviewers' assertions a signature needs.
    uint16 private _threshold;
    // Nonce of the next reviewer change.
    uint64 private _changeNonce;

    /// @notice Sets the first reviewers and the threshold; from then on only they can change them.
    /// @param keys The first reviewers' passkeys (64 bytes qx ‖ qy each, distinct).
    /// @param threshold_ How many of them must sign (1..keys.length).
    constructor(bytes[] memory keys, uint16 threshold_) {
        for (uint256 i = 0; i < keys.length; ++i) {
            _addReviewer(keys[i]);
        }
        _setThreshold(threshold_);
    }

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return _isApproved(hash, signature) ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function changeReviewers(ReviewerChange calldata change, bytes calldata signature) external {
        if (block.timestamp > change.deadline) revert PasskeyChangeExpired(change.deadline);
        uint64 expected = _changeNonce;
        if (change.nonce != expected) revert PasskeyChangeInvalidNonce(expected, change.nonce);
        bytes32 digest = changeDigest(change);
        if (!_isApproved(digest, signature)) revert PasskeyChangeUnauthorized(digest);
        // unchecked: one nonce per applied change; 2^64 changes cannot happen.
        unchecked {
            _changeNonce = expected + 1;
        }
        for (uint256 i = 0; i < change.remove.length; ++i) {
            _removeReviewer(change.remove[i]);
        }
        for (uint256 i = 0; i < change.add.length; ++i) {
            _addReviewer(change.add[i]);
        }
        _setThreshold(change.threshold);
        emit ReviewerChangeApplied(expected, digest, msg.sender);
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function changeDigest(ReviewerChange calldata change) public view returns (bytes32) {
        bytes32 structHash = keccak256(
            abi.encode(
                _CHANGE_TYPEHASH,
                _hashKeys(change.add),
                _hashKeys(change.remove),
                change.threshold,
                change.nonce,
                change.deadline
            )
        );
        bytes32 domainSeparator =
            keccak256(abi.encode(_DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, address(this)));
        return keccak256(abi.encodePacked(hex"1901", domainSeparator, structHash));
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function isApprovedByReviewers(bytes32 hash, bytes calldata signature) public view returns (bool) {
        (bytes[] memory keys, WebAuthnAssertion.Assertion[] memory assertions) =
            abi.decode(signature, (bytes[], WebAuthnAssertion.Assertion[]));
        if (keys.length != assertions.length || keys.length < _threshold) return false;
        bytes32 previous = 0;
        for (uint256 i = 0; i < keys.length; ++i) {
            bytes memory key = keys[i];
            bytes32 reviewerId = keccak256(key);
            if (reviewerId <= previous || _positions[reviewerId] == 0) return false;
            previous = reviewerId;
            (bytes32 qx, bytes32 qy) = _coordinates(key);
            if (!WebAuthnAssertion.verify(hash, assertions[i], qx, qy)) return false;
        }
        return true;
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function reviewers() external view returns (bytes[] memory keys) {
        return _keys;
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function isReviewer(bytes calldata key) external view returns (bool) {
        return _positions[keccak256(key)] != 0;
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function threshold() external view returns (uint16) {
        return _threshold;
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function changeNonce() external view returns (uint64) {
        return _changeNonce;
    }

    /// @inheritdoc IDepartmentPasskeyAccount
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", "DepartmentPasskeyAccount", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    /// @dev isApprovedByReviewers, with a malformed signature (abi.decode reverts) answered as not approved, as
    /// EIP-1271 callers and the relayers of changeReviewers expect.
    function _isApproved(bytes32 hash, bytes calldata signature) private view returns (bool) {
        try this.isApprovedByReviewers(hash, signature) returns (bool approved) {
            return approved;
        } catch {
            return false;
        }
    }

    function _addReviewer(bytes memory key) private {
        if (key.length != _KEY_LENGTH) revert PasskeyInvalidKey(key);
        (bytes32 qx, bytes32 qy) = _coordinates(key);
        if (!P256.isValidPublicKey(qx, qy)) revert PasskeyInvalidKey(key);
        bytes32 reviewerId = keccak256(key);
        if (_positions[reviewerId] != 0) revert PasskeyReviewerExists(key);
        if (_keys.length == MAX_REVIEWERS) revert PasskeyTooManyReviewers(_keys.length + 1, MAX_REVIEWERS);
        _keys.push(key);
        _positions[reviewerId] = _keys.length;
        emit ReviewerAdded(reviewerId, key);
    }

    function _removeReviewer(bytes memory key) private {
        bytes32 reviewerId = keccak256(key);
        uint256 position = _positions[reviewerId];
        if (position == 0) revert PasskeyReviewerUnknown(key);
        uint256 last = _keys.length;
        if (position != last) {
            bytes memory moved = _keys[last - 1];
            _keys[position - 1] = moved;
            _positions[keccak256(moved)] = position;
        }
        _keys.pop();
        delete _positions[reviewerId];
        emit ReviewerRemoved(reviewerId, key);
    }

    function _setThreshold(uint16 threshold_) private {
        if (threshold_ == 0 || threshold_ > _keys.length) revert PasskeyInvalidThreshold(threshold_, _keys.length);
        uint16 previous = _threshold;
        if (previous == threshold_) return;
        _threshold = threshold_;
        emit ThresholdSet(previous, threshold_);
    }

    /// @dev EIP-712 encoding of a bytes[] member: keccak256 of the concatenated keccak256 of each element.
    function _hashKeys(bytes[] calldata keys) private pure returns (bytes32) {
        bytes32[] memory hashes = new bytes32[](keys.length);
        for (uint256 i = 0; i < keys.length; ++i) {
            hashes[i] = keccak256(keys[i]);
        }
        return keccak256(abi.encodePacked(hashes));
    }

    /// @dev The coordinates of a 64-byte key qx ‖ qy (the caller checked the length, or the key is stored).
    function _coordinates(bytes memory key) private pure returns (bytes32 qx, bytes32 qy) {
        if (key.length != _KEY_LENGTH) return (0, 0);
        return abi.decode(key, (bytes32, bytes32));
    }
}
