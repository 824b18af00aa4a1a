// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IApprovalRegistry} from "./IApprovalRegistry.sol";

/// @title Decision verifier: checks a department's EIP-712 signature of a decision.
/// @notice Stateless and ownerless: the approval registry holds its address as an immutable and asks it whether a
/// relayed decision was signed by the department's wallet. Kept apart from the registry only so that the registry
/// stays under the EIP-170 code size limit.
interface IDecisionVerifier {
    /// @notice The EIP-712 digest of `decision` for the approval registry `registry` on this chain.
    /// @dev Domain: name "LicenceApprovalRegistry", version "1", chainId, verifyingContract = `registry`.
    /// @param decision The decision.
    /// @param registry The approval registry the decision is for.
    /// @return The digest the department's wallet signs.
    function decisionDigest(IApprovalRegistry.SignedDecision calldata decision, address registry)
        external
        view
        returns (bytes32);

    /// @notice Whether `signature` is `wallet`'s signature of `decision` for the calling registry: ECDSA for an
    /// externally owned wallet, EIP-1271 `isValidSignature` for a contract wallet (a Safe, for instance).
    /// @param wallet The department's wallet.
    /// @param decision The decision.
    /// @param signature The signature.
    /// @return True when valid.
    function isValidDecision(address wallet, IApprovalRegistry.SignedDecision calldata decision, bytes calldata signature)
        external
        view
        returns (bool);
}
