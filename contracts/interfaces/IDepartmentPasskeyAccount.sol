// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";

/// @title Department passkey account: a department's wallet whose signers are its reviewers' passkeys.
/// @notice An EIP-1271 account a department deploys for itself and registers as its department-held wallet. It
/// signs (isValidSignature answers the magic value) only when `threshold` distinct current reviewers give WebAuthn
/// assertions (P-256 passkeys, user verified) whose challenge is the hash. It has no owner and no administrator:
/// the reviewer set and the threshold change only through changeReviewers, with the same threshold of current
/// reviewers' assertions over an EIP-712 ReviewerChange in this account's own domain.
/// @dev A reviewer is identified by its passkey's public key, 64 bytes `qx ‖ qy` (the key of an ERC-7913 WebAuthn
/// signer), and by `reviewerId = keccak256(key)`. A signature is `abi.encode(bytes[] keys,
/// WebAuthnAssertion.Assertion[] assertions)`, one assertion per key, keys in strictly ascending reviewerId order
/// (which makes them distinct).
interface IDepartmentPasskeyAccount is IERC1271 {
    /// @notice A change of the reviewer set, signed by the current reviewers (EIP-712, this account's domain).
    /// Type: ReviewerChange(bytes[] add,bytes[] remove,uint16 threshold,uint64 nonce,uint64 deadline).
    struct ReviewerChange {
        bytes[] add; // passkeys to add (64 bytes each), after the removals
        bytes[] remove; // passkeys to remove
        uint16 threshold; // the threshold after the change (unchanged when equal to the current one)
        uint64 nonce; // must equal changeNonce(): each change applies once
        uint64 deadline; // unix seconds; the change is refused after it
    }

    /// @notice A passkey became a reviewer.
    /// @param reviewerId keccak256 of the key.
    /// @param key The P-256 public key, qx ‖ qy.
    event ReviewerAdded(bytes32 indexed reviewerId, bytes key);

    /// @notice A passkey stopped being a reviewer: its assertions no longer count.
    /// @param reviewerId keccak256 of the key.
    /// @param key The P-256 public key, qx ‖ qy.
    event ReviewerRemoved(bytes32 indexed reviewerId, bytes key);

    /// @notice The number of reviewers whose assertions a signature needs changed.
    /// @param previousThreshold The threshold before (0 at deployment).
    /// @param threshold The threshold now.
    event ThresholdSet(uint16 previousThreshold, uint16 threshold);

    /// @notice A signed reviewer change was applied (its ReviewerAdded / ReviewerRemoved / ThresholdSet precede it).
    /// @param nonce The change's nonce (changeNonce() is now nonce + 1).
    /// @param digest The EIP-712 digest the reviewers signed.
    /// @param relayer Who sent the transaction (anyone may relay a signed change).
    event ReviewerChangeApplied(uint64 indexed nonce, bytes32 digest, address relayer);

    /// @notice `key` is not a P-256 public key (64 bytes qx ‖ qy of a point on the curve).
    /// @param key The key given.
    error PasskeyInvalidKey(bytes key);

    /// @notice `key` is a reviewer already.
    /// @param key The key.
    error PasskeyReviewerExists(bytes key);

    /// @notice `key` is not a reviewer.
    /// @param key The key.
    error PasskeyReviewerUnknown(bytes key);

    /// @notice The change would leave more reviewers than the account allows.
    /// @param count The number of reviewers it would leave.
    /// @param limit MAX_REVIEWERS.
    error PasskeyTooManyReviewers(uint256 count, uint256 limit);

    /// @notice `threshold` is 0 or more than the number of reviewers.
    /// @param threshold The threshold.
    /// @param reviewers The number of reviewers.
    error PasskeyInvalidThreshold(uint16 threshold, uint256 reviewers);

    /// @notice The change's deadline has passed.
    /// @param deadline The change's deadline.
    error PasskeyChangeExpired(uint64 deadline);

    /// @notice The change's nonce is not the account's next one (already applied, or not yet due).
    /// @param expected changeNonce().
    /// @param nonce The change's nonce.
    error PasskeyChangeInvalidNonce(uint64 expected, uint64 nonce);

    /// @notice The assertions are not `threshold` distinct current reviewers' assertions over the change's digest.
    /// @param digest The change's EIP-712 digest.
    error PasskeyChangeUnauthorized(bytes32 digest);

    /// @notice Applies a reviewer change signed by `threshold` current reviewers: removes, then adds, then sets the
    /// threshold, all or nothing. Anyone may send it; the signatures are the authority.
    /// @param change The change, exactly as the reviewers signed it.
    /// @param signature abi.encode(bytes[] keys, WebAuthnAssertion.Assertion[] assertions) over changeDigest(change).
    function changeReviewers(ReviewerChange calldata change, bytes calldata signature) external;

    /// @notice The EIP-712 digest of `change` in this account's domain: the challenge of the reviewers' assertions.
    /// @param change The change.
    /// @return The digest.
    function changeDigest(ReviewerChange calldata change) external view returns (bytes32);

    /// @notice Whether `signature` carries `threshold` distinct current reviewers' assertions over `hash`: each key a
    /// current reviewer, keys in strictly ascending keccak256 order, each assertion valid for its key with `hash`
    /// as its challenge (see WebAuthnAssertion).
    /// @param hash The signed hash (the challenge of every assertion).
    /// @param signature abi.encode(bytes[] keys, WebAuthnAssertion.Assertion[] assertions).
    /// @return True when it does (a malformed signature reverts).
    function isApprovedByReviewers(bytes32 hash, bytes calldata signature) external view returns (bool);

    /// @notice The current reviewers' passkeys (qx ‖ qy), in no particular order.
    /// @return keys The keys.
    function reviewers() external view returns (bytes[] memory keys);

    /// @notice Whether `key` is a current reviewer's passkey.
    /// @param key The key (qx ‖ qy).
    /// @return True when it is.
    function isReviewer(bytes calldata key) external view returns (bool);

    /// @notice How many distinct reviewers' assertions a signature needs.
    /// @return The threshold.
    function threshold() external view returns (uint16);

    /// @notice The nonce the next reviewer change must carry.
    /// @return The nonce.
    function changeNonce() external view returns (uint64);

    /// @notice This account's EIP-712 domain (EIP-5267), in which reviewer changes are signed.
    /// @return fields 0x0f: name, version, chainId and verifyingContract are used.
    /// @return name "DepartmentPasskeyAccount".
    /// @return version "1".
    /// @return chainId The chain id.
    /// @return verifyingContract This account.
    /// @return salt Unused (zero).
    /// @return extensions None.
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
        );
}
