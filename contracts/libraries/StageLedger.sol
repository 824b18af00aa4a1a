// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IApprovalRegistry} from "../interfaces/IApprovalRegistry.sol";

/// @title StageLedger: the decisions of one stage of one request, packed into 152 bits.
/// @notice Reads and updates the `ledger` of IApprovalRegistry.Progress (and of the stored stages).
/// @dev Position p (0..7) of the stage uses bits [19p, 19p + 19): a 3-bit DecisionStatus, then a 16-bit mask
/// of the document indexes the department reviewed. Keeping a whole stage in the request's progress slot
/// makes a decision a write to one existing slot.
library StageLedger {
    uint256 internal constant POSITION_BITS = 19;
    uint256 private constant _STATUS_MASK = 0x7;
    uint256 private constant _POSITION_MASK = (1 << POSITION_BITS) - 1;

    /// @notice The decision of one position.
    /// @param ledger The stage's ledger.
    /// @param position The position (0..7).
    /// @return The position's DecisionStatus.
    function statusAt(uint256 ledger, uint256 position) internal pure returns (IApprovalRegistry.DecisionStatus) {
        return IApprovalRegistry.DecisionStatus((ledger >> (POSITION_BITS * position)) & _STATUS_MASK);
    }

    /// @notice The documents one position reviewed.
    /// @param ledger The stage's ledger.
    /// @param position The position (0..7).
    /// @return The position's reviewed mask: bit i = document index i.
    function reviewedAt(uint256 ledger, uint256 position) internal pure returns (uint16) {
        return uint16(ledger >> (POSITION_BITS * position + 3));
    }

    /// @notice Sets the decision and reviewed mask of one position.
    /// @param ledger The stage's ledger.
    /// @param position The position (0..7).
    /// @param status The decision.
    /// @param reviewedMask The documents reviewed: bit i = document index i.
    /// @return The new ledger.
    function set(uint256 ledger, uint256 position, IApprovalRegistry.DecisionStatus status, uint16 reviewedMask)
        internal
        pure
        returns (uint256)
    {
        uint256 shift = POSITION_BITS * position;
        uint256 entry = uint256(uint8(status)) | (uint256(reviewedMask) << 3);
        return (ledger & ~(_POSITION_MASK << shift)) | (entry << shift);
    }

    /// @notice The positions that approved.
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @return positions Bit p set when position p approved.
    function approvedPositions(uint256 ledger, uint256 count) internal pure returns (uint8 positions) {
        for (uint256 p = 0; p < count; ++p) {
            if (statusAt(ledger, p) == IApprovalRegistry.DecisionStatus.Approved) positions |= uint8(1 << p);
        }
    }

    /// @notice Whether a position must review again after a document update.
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @return True when a position is ReviewRequired.
    function anyReviewRequired(uint256 ledger, uint256 count) internal pure returns (bool) {
        for (uint256 p = 0; p < count; ++p) {
            if (statusAt(ledger, p) == IApprovalRegistry.DecisionStatus.ReviewRequired) return true;
        }
        return false;
    }

    /// @notice The first position that has not approved: whose turn it is in SEQUENTIAL.
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @return The position (`count` when all have approved).
    function firstNotApproved(uint256 ledger, uint256 count) internal pure returns (uint8) {
        for (uint256 p = 0; p < count; ++p) {
            if (statusAt(ledger, p) != IApprovalRegistry.DecisionStatus.Approved) return uint8(p);
        }
        return uint8(count);
    }

    /// @notice Approvals that reviewed document `docIndex` become ReviewRequired (keeping their mask).
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @param docIndex The document that got a new version.
    /// @return updated The new ledger.
    /// @return hits Bit p set when position p was invalidated.
    function invalidate(uint256 ledger, uint256 count, uint8 docIndex)
        internal
        pure
        returns (uint256 updated, uint8 hits)
    {
        updated = ledger;
        for (uint256 p = 0; p < count; ++p) {
            if (
                statusAt(ledger, p) == IApprovalRegistry.DecisionStatus.Approved
                    && (reviewedAt(ledger, p) >> docIndex) & 1 == 1
            ) {
                updated = set(updated, p, IApprovalRegistry.DecisionStatus.ReviewRequired, reviewedAt(ledger, p));
                hits |= uint8(1 << p);
            }
        }
    }

    /// @notice Every approval becomes ReviewRequired (keeping its mask): a document was added under review.
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @return updated The new ledger.
    /// @return hits Bit p set when position p was invalidated.
    function invalidateApprovals(uint256 ledger, uint256 count) internal pure returns (uint256 updated, uint8 hits) {
        updated = ledger;
        for (uint256 p = 0; p < count; ++p) {
            if (statusAt(ledger, p) == IApprovalRegistry.DecisionStatus.Approved) {
                updated = set(updated, p, IApprovalRegistry.DecisionStatus.ReviewRequired, reviewedAt(ledger, p));
                hits |= uint8(1 << p);
            }
        }
    }

    /// @notice Positions holding `status` go back to Pending (mask cleared).
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @param status The decision to reopen.
    /// @return updated The new ledger.
    /// @return positions Bit p set when position p was reopened.
    function reopen(uint256 ledger, uint256 count, IApprovalRegistry.DecisionStatus status)
        internal
        pure
        returns (uint256 updated, uint8 positions)
    {
        updated = ledger;
        for (uint256 p = 0; p < count; ++p) {
            if (statusAt(ledger, p) == status) {
                updated = set(updated, p, IApprovalRegistry.DecisionStatus.Pending, 0);
                positions |= uint8(1 << p);
            }
        }
    }

    /// @notice The positions holding a decision (any status but Pending).
    /// @param ledger The stage's ledger.
    /// @param count The number of positions to look at, from position 0.
    /// @return positions Bit p set when position p is not Pending.
    function decidedPositions(uint256 ledger, uint256 count) internal pure returns (uint8 positions) {
        for (uint256 p = 0; p < count; ++p) {
            if (statusAt(ledger, p) != IApprovalRegistry.DecisionStatus.Pending) positions |= uint8(1 << p);
        }
    }
}
