// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ERC-5192: Minimal Soulbound NFTs
/// @notice A locked token cannot be transferred.
/// @dev The ERC-165 identifier for this interface is 0xb45a3c0e.
interface IERC5192 {
    /// @notice Emitted when the locking status is changed to locked.
    /// @param tokenId The identifier for a token.
    event Locked(uint256 tokenId);

    /// @notice Emitted when the locking status is changed to unlocked.
    /// @param tokenId The identifier for a token.
    event Unlocked(uint256 tokenId);

    /// @notice Returns the locking status of a Soulbound Token.
    /// @dev Tokens assigned to the zero address are considered invalid; queries about them revert.
    /// @param tokenId The identifier for a token.
    /// @return Whether the token is locked.
    function locked(uint256 tokenId) external view returns (bool);
}
