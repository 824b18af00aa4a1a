// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

import {IApprovalRegistry} from "./interfaces/IApprovalRegistry.sol";
import {IDocumentRegistry} from "./interfaces/IDocumentRegistry.sol";
import {ILicenceToken} from "./interfaces/ILicenceToken.sol";
import {Roles} from "./libraries/Roles.sol";

/// @title DocumentRegistry
/// @notice Anchors the SHA-256 hash of every version of every document of a licence request.
/// @dev Per token, one word holds the phase, the document count and the latest version of up to 16 documents,
/// so an anchor touches one existing slot and one new one (the hash record).
contract DocumentRegistry is AccessControl, IDocumentRegistry {
    /// @notice Maximum number of documents of one request.
    uint8 public constant MAX_DOCUMENTS = 16;
    /// @notice Maximum number of versions of one document (15 bits in the per-request word).
    uint16 public constant MAX_VERSION = 0x7fff;
    uint256 private constant _VERSION_BITS = 15;
    uint256 private constant _VERSIONS_OFFSET = 16;

    /// @notice The licence token whose requests the documents belong to.
    ILicenceToken public immutable licenceToken;
    /// @notice Approval registry notified of new versions of documents under review (set once).
    IApprovalRegistry public reviewRegistry;
    // Record per request and anchored hash: identical bytes may be anchored in several requests, once in each.
    mapping(uint256 tokenId => mapping(bytes32 sha256Hash => Anchor)) private _anchors;
    // Packed per-token state: phase | count << 8 | latest version of document i << (16 + 15 * i).
    mapping(uint256 tokenId => uint256) private _documents;

    constructor(ILicenceToken licenceToken_, address admin) {
        licenceToken = licenceToken_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @inheritdoc IDocumentRegistry
    function anchorDocument(uint256 tokenId, bytes16 documentId, bytes32 docType, bytes32 sha256Hash)
        external
        onlyRole(Roles.OPERATOR_ROLE)
        returns (uint8 docIndex)
    {
        uint256 packed = _documents[tokenId];
        Phase phase = Phase(uint8(packed));
        if (phase == Phase.Unopened) {
            // First document of the request: the token must exist and still be a Draft.
            (, ILicenceToken.Status status,,) = licenceToken.validityOf(tokenId);
            if (status != ILicenceToken.Status.Draft) revert DocumentsNotEditable(tokenId);
            packed = uint256(uint8(Phase.Open));
        } else if (phase == Phase.Locked) {
            revert DocumentsNotEditable(tokenId);
        }
        docIndex = uint8(packed >> 8);
        if (docIndex >= MAX_DOCUMENTS) revert DocumentLimitReached(tokenId, MAX_DOCUMENTS);

        _record(tokenId, sha256Hash, documentId, docIndex, 1);
        // count + 1, and version 1 at the new index.
        _documents[tokenId] = packed + (1 << 8) + (1 << (_VERSIONS_OFFSET + _VERSION_BITS * docIndex));
        emit DocumentAnchored(tokenId, documentId, sha256Hash, docIndex, 1, docType);

        // A document added under review was seen by no one: the current stage's approvals must be given again.
        if (phase == Phase.Review) reviewRegistry.invalidateReviews(tokenId, docIndex, 1);
    }

    /// @inheritdoc IDocumentRegistry
    function anchorVersion(uint256 tokenId, bytes32 previousHash, bytes32 sha256Hash)
        external
        onlyRole(Roles.OPERATOR_ROLE)
        returns (uint16 version)
    {
        Anchor memory previous = _anchors[tokenId][previousHash];
        if (previous.version == 0) revert DocumentUnknownHash(tokenId, previousHash);
        uint256 packed = _documents[tokenId];
        Phase phase = Phase(uint8(packed));
        if (phase == Phase.Locked) revert DocumentsNotEditable(tokenId);

        uint256 shift = _VERSIONS_OFFSET + _VERSION_BITS * previous.docIndex;
        uint16 latest = uint16((packed >> shift) & MAX_VERSION);
        if (previous.version != latest) revert DocumentNotLatestVersion(previousHash, previous.version, latest);
        if (latest == MAX_VERSION) revert DocumentVersionLimitReached(tokenId, previous.docIndex);
        // unchecked: latest < MAX_VERSION was just checked.
        unchecked {
            version = latest + 1;
        }

        _record(tokenId, sha256Hash, previous.documentId, previous.docIndex, version);
        _documents[tokenId] = packed + (1 << shift);
        emit DocumentAnchored(tokenId, previous.documentId, sha256Hash, previous.docIndex, version, bytes32(0));

        if (phase == Phase.Review) reviewRegistry.invalidateReviews(tokenId, previous.docIndex, version);
    }

    /// @inheritdoc IDocumentRegistry
    function setPhase(uint256 tokenId, Phase phase) external {
        if (msg.sender != address(reviewRegistry)) revert DocumentUnauthorizedRegistry(msg.sender);
        uint256 packed = _documents[tokenId];
        Phase from = Phase(uint8(packed));
        // Documents never go back to Open (changes without invalidation) nor to Unopened; Locked reopens to Review
        // only when an escalation is sent back to the departments.
        if (phase == Phase.Open || phase == Phase.Unopened) revert DocumentInvalidPhaseChange(tokenId, from, phase);
        _documents[tokenId] = (packed & ~uint256(0xff)) | uint8(phase);
        emit DocumentPhaseChanged(tokenId, phase);
    }

    /// @inheritdoc IDocumentRegistry
    function setReviewRegistry(address registry) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (registry == address(0)) revert DocumentInvalidReviewRegistry(registry);
        if (address(reviewRegistry) != address(0)) revert DocumentReviewRegistryAlreadySet(address(reviewRegistry));
        reviewRegistry = IApprovalRegistry(registry);
        emit ReviewRegistrySet(registry);
    }

    /// @inheritdoc IDocumentRegistry
    function anchorOf(uint256 tokenId, bytes32 sha256Hash)
        external
        view
        returns (Anchor memory anchor, bool isLatest)
    {
        anchor = _anchors[tokenId][sha256Hash];
        if (anchor.version == 0) revert DocumentUnknownHash(tokenId, sha256Hash);
        uint256 packed = _documents[tokenId];
        isLatest = uint16((packed >> (_VERSIONS_OFFSET + _VERSION_BITS * anchor.docIndex)) & MAX_VERSION)
            == anchor.version;
    }

    /// @inheritdoc IDocumentRegistry
    function documentsOf(uint256 tokenId)
        external
        view
        returns (Phase phase, uint8 count, uint16[] memory latestVersions)
    {
        uint256 packed = _documents[tokenId];
        phase = Phase(uint8(packed));
        count = uint8(packed >> 8);
        latestVersions = new uint16[](count);
        for (uint256 i = 0; i < count; ++i) {
            latestVersions[i] = uint16((packed >> (_VERSIONS_OFFSET + _VERSION_BITS * i)) & MAX_VERSION);
        }
    }

    /// @inheritdoc IDocumentRegistry
    function packedDocumentsOf(uint256 tokenId) external view returns (uint256) {
        return _documents[tokenId];
    }

    /// @inheritdoc IDocumentRegistry
    function checkReviewed(uint256 tokenId, uint16 reviewedMask, bytes32[] calldata hashes)
        external
        view
        returns (uint16 mask, uint256 packed, uint8 mismatch)
    {
        packed = _documents[tokenId];
        uint256 count = uint8(packed >> 8);
        mask = reviewedMask == 0 ? uint16((1 << count) - 1) : reviewedMask;
        mismatch = type(uint8).max;
        uint256 k;
        // Bounded: at most MAX_DOCUMENTS documents.
        for (uint256 i = 0; i < count; ++i) {
            if ((mask >> i) & 1 == 0) continue;
            if (k == hashes.length) return (mask, packed, uint8(i));
            Anchor memory anchor = _anchors[tokenId][hashes[k++]];
            uint16 latest = uint16((packed >> (_VERSIONS_OFFSET + _VERSION_BITS * i)) & MAX_VERSION);
            if (anchor.docIndex != i || anchor.version != latest || latest == 0) {
                return (mask, packed, uint8(i));
            }
        }
        if (k != hashes.length) mismatch = uint8(count);
    }

    /// @dev No role goes to a department wallet (the approval registry keeps the list once it is wired; a registry
    /// without code, as some tests wire, has no departments).
    function _grantRole(bytes32 role, address account) internal override returns (bool) {
        IApprovalRegistry registry = reviewRegistry;
        if (address(registry).code.length != 0 && registry.isDepartmentWallet(account)) {
            revert DocumentRoleToDepartmentWallet(account);
        }
        return super._grantRole(role, account);
    }

    function _record(uint256 tokenId, bytes32 sha256Hash, bytes16 documentId, uint8 docIndex, uint16 version)
        private
    {
        if (sha256Hash == bytes32(0)) revert DocumentInvalidHash();
        Anchor storage slot = _anchors[tokenId][sha256Hash];
        if (slot.version != 0) revert DocumentAlreadyAnchored(sha256Hash, tokenId);
        // Token ids are capped at 2^40-1 by the licence token; block numbers and timestamps fit 32 bits
        // until 2106 (timestamps) and for 136 years of one-second blocks.
        _anchors[tokenId][sha256Hash] = Anchor({
            documentId: documentId,
            tokenId: uint40(tokenId),
            docIndex: docIndex,
            version: version,
            blockNumber: uint32(block.number),
            timestamp: uint32(block.timestamp)
        });
    }
}
