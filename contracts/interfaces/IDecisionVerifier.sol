// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IApprovalRegistry} from "./IApprovalRegistry.sol";

/// @title Decision verifier: the EIP-712 hashing and signature checks of the approval registry.
/// @notice Stateless and ownerless: the approval registry holds its address as an immutable. It hashes a decision
/// under the domain separator the registry passes (the registry's own domain: name, version, chain id, address and
/// per-deployment salt) and checks a wallet's signature of a digest. Kept apart from the registry only so that the
/// registry stays under the EIP-170 code size limit.
interface IDecisionVerifier {
    /// @notice The EIP-712 digest of `decision` under `domainSeparator`.
    /// @param decision The decision.
    /// @param domainSeparator The approval registry's EIP-712 domain separator.
    /// @return The digest the department's wallet signs.
    function decisionDigest(IApprovalRegistry.Decision calldata decision, bytes32 domainSeparator)
        external
        pure
        returns (bytes32);

    /// @notice Whether `signature` is `wallet`'s signature of `decision` under `domainSeparator`.
    /// @param wallet The department's wallet.
    /// @param decision The decision.
    /// @param domainSeparator The approval registry's EIP-712 domain separator.
    /// @param signature The signature.
    /// @return True when valid.
    function isValidDecision(
        address wallet,
        IApprovalRegistry.Decision calldata decision,
        bytes32 domainSeparator,
        bytes calldata signature
    ) external view returns (bool);

    /// @notice Whether `signature` is `signer`'s signature of `digest`: ECDSA (low s) for an externally owned
    /// account, EIP-1271 `isValidSignature` for a contract wallet (a Safe, for instance).
    /// @param signer The wallet.
    /// @param digest The signed digest.
    /// @param signature The signature.
    /// @return True when valid.
    function isValidSignature(address signer, bytes32 digest, bytes calldata signature) external view returns (bool);

    /// @notice Whether `proof` is `wallet`'s signature of DepartmentKey(bytes32 code,address wallet,uint8 custody)
    /// under `domainSeparator`: the proof that the wallet of a department holds its key.
    /// @param code The department code.
    /// @param wallet The department wallet.
    /// @param custody Who holds the key (IApprovalRegistry.Custody).
    /// @param domainSeparator The approval registry's EIP-712 domain separator.
    /// @param proof The wallet's signature.
    /// @return True when valid.
    function isValidKeyProof(bytes32 code, address wallet, uint8 custody, bytes32 domainSeparator, bytes calldata proof)
        external
        view
        returns (bool);
}
