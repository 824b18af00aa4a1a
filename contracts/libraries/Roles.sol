// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Roles shared by the three contracts (OpenZeppelin AccessControl; DEFAULT_ADMIN_ROLE grants them).
/// @notice The role identifiers LicenceToken, DocumentRegistry and ApprovalRegistry check with `onlyRole`.
library Roles {
    /// @dev Registers departments and workflows; suspends, reinstates and revokes licences; resolves escalations.
    bytes32 internal constant ADMIN_ROLE = keccak256("ADMIN_ROLE");
    /// @dev The platform operator: mints requests, anchors documents and status lists, submits, resubmits, cancels.
    bytes32 internal constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");
    /// @dev Acts on overdue stages (NOTIFY / ESCALATE / AUTO_REJECT), checked against block time.
    bytes32 internal constant KEEPER_ROLE = keccak256("KEEPER_ROLE");
    // No registry role: the approval registry is wired into the token and the document registry once, at
    // deployment, so no role holder can make another address drive the review lifecycle.
}
