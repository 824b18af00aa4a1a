// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @title OwnersWallet (test only)
/// @notice A minimal k-of-n contract wallet speaking EIP-1271, standing in for a Safe in the contract tests: a
/// signature is valid when it is the concatenation of at least `threshold` 65-byte ECDSA signatures of the hash
/// by distinct owners, in ascending owner-address order (as a Safe orders them).
contract OwnersWallet is IERC1271 {
    bytes4 private constant _INVALID = 0xffffffff;

    /// @notice Whether an address is an owner.
    mapping(address owner => bool) public isOwner;
    /// @notice Number of owner signatures a valid signature needs.
    uint256 public immutable threshold;

    /// @dev The threshold is 1..owners.length.
    /// @param threshold The threshold refused.
    error OwnersWalletInvalidThreshold(uint256 threshold);

    constructor(address[] memory owners, uint256 threshold_) {
        if (threshold_ == 0 || threshold_ > owners.length) revert OwnersWalletInvalidThreshold(threshold_);
        for (uint256 i = 0; i < owners.length; ++i) isOwner[owners[i]] = true;
        threshold = threshold_;
    }

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length % 65 != 0 || signature.length / 65 < threshold) return _INVALID;
        address last;
        for (uint256 offset = 0; offset < signature.length; offset += 65) {
            (address signer, ECDSA.RecoverError failure,) = ECDSA.tryRecoverCalldata(hash, signature[offset:offset + 65]);
            // Ascending order: no owner counted twice.
            if (failure != ECDSA.RecoverError.NoError || !isOwner[signer] || signer <= last) return _INVALID;
            last = signer;
        }
        return IERC1271.isValidSignature.selector;
    }
}
