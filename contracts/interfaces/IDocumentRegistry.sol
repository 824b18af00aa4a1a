// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Document registry: SHA-256 hashes of a licence request's documents, versioned 1..n per document.
/// @notice A hash is anchored at most once per request, so applicants can reuse a file across requests (the same
/// certificate for two licences, the same blank form as everyone). Lookup by request and hash answers (document,
/// version, block, timestamp) from chain state alone.
interface IDocumentRegistry {
    /// @notice Whether documents of a token can be anchored, and whether new versions invalidate reviews.
    enum Phase {
        Unopened, // nothing anchored yet: the first anchor checks the token is a Draft
        Open, // Draft: documents can be added and replaced freely
        Review, // under review: new versions invalidate the approvals that reviewed older ones
        Locked // decided or cancelled: nothing can be anchored any more
    }

    /// @notice The record of one anchored hash (one version of one document), packed into one slot.
    struct Anchor {
        bytes16 documentId; // the platform's document id (a UUID)
        uint40 tokenId;
        uint8 docIndex; // position of the document within its request, 0..15
        uint16 version; // 1..n
        uint32 blockNumber;
        uint32 timestamp;
    }

    /// @notice Version `version` of document `documentId` (index `docIndex` of `tokenId`) has hash `sha256Hash`.
    /// @param tokenId The licence request.
    /// @param documentId The platform's document id (a UUID).
    /// @param sha256Hash The SHA-256 hash of this version's bytes.
    /// @param docIndex The document's position within the request, 0..15.
    /// @param version The version anchored (1..n).
    /// @param docType The document type for version 1, e.g. "SITE_PLAN"; zero for later versions.
    event DocumentAnchored(
        uint256 indexed tokenId,
        bytes16 indexed documentId,
        bytes32 indexed sha256Hash,
        uint8 docIndex,
        uint16 version,
        bytes32 docType
    );

    /// @notice The document phase of `tokenId` changed.
    /// @param tokenId The licence request.
    /// @param phase The new phase.
    event DocumentPhaseChanged(uint256 indexed tokenId, Phase phase);

    /// @notice The approval registry told about new versions of documents under review.
    /// @param registry The approval registry.
    event ReviewRegistrySet(address indexed registry);

    /// @dev The zero hash is not a SHA-256 digest we accept.
    error DocumentInvalidHash();

    /// @dev This hash is already anchored in `tokenId`: identical bytes cannot be anchored twice in one request.
    error DocumentAlreadyAnchored(bytes32 sha256Hash, uint256 tokenId);

    /// @dev No document version of `tokenId` has this hash.
    error DocumentUnknownHash(uint256 tokenId, bytes32 sha256Hash);

    /// @dev `previousHash` is version `version`, but the latest version of that document is `latest`.
    error DocumentNotLatestVersion(bytes32 previousHash, uint16 version, uint16 latest);

    /// @dev The token does not accept documents (not a Draft at first anchor, or its review is closed).
    error DocumentsNotEditable(uint256 tokenId);

    /// @dev A request holds at most 16 documents.
    error DocumentLimitReached(uint256 tokenId, uint8 limit);

    /// @dev A document holds at most 32,767 versions.
    error DocumentVersionLimitReached(uint256 tokenId, uint8 docIndex);

    /// @dev The review registry must be a contract address, not zero.
    error DocumentInvalidReviewRegistry(address registry);

    /// @dev The review registry can be set once.
    error DocumentReviewRegistryAlreadySet(address registry);

    /// @dev Only the approval registry wired at deployment sets document phases.
    /// @param caller The address that tried.
    error DocumentUnauthorizedRegistry(address caller);

    /// @dev Documents never go back to Open or Unopened: every change after submission invalidates reviews.
    /// @param tokenId The licence request.
    /// @param from The current phase.
    /// @param to The phase refused.
    error DocumentInvalidPhaseChange(uint256 tokenId, Phase from, Phase to);

    /// @dev No role goes to a department's wallet.
    /// @param account The department wallet.
    error DocumentRoleToDepartmentWallet(address account);

    /// @notice Anchors version 1 of a new document of `tokenId`. Only OPERATOR_ROLE. Under review, the approvals
    /// of the current stage become ReviewRequired (no one has seen the new document).
    /// @param tokenId The licence request: a Draft for its first document, and its documents not Locked.
    /// @param documentId The platform's document id (a UUID).
    /// @param docType The document type, e.g. "SITE_PLAN".
    /// @param sha256Hash The SHA-256 hash of the document's bytes (not zero, not anchored in this request yet).
    /// @return docIndex The document's position within the request.
    function anchorDocument(uint256 tokenId, bytes16 documentId, bytes32 docType, bytes32 sha256Hash)
        external
        returns (uint8 docIndex);

    /// @notice Anchors the next version of the document of `tokenId` whose latest version has hash `previousHash`.
    /// @dev Only OPERATOR_ROLE. Under review, tells the approval registry, which invalidates on chain every
    /// approval that reviewed an older version of this document.
    /// @param tokenId The licence request.
    /// @param previousHash The hash of the document's latest version.
    /// @param sha256Hash The SHA-256 hash of the new version's bytes (not zero, not anchored in this request yet).
    /// @return version The new version number.
    function anchorVersion(uint256 tokenId, bytes32 previousHash, bytes32 sha256Hash)
        external
        returns (uint16 version);

    /// @notice Sets the document phase of a token. Only the approval registry (the review registry set once);
    /// never back to Open or Unopened.
    /// @param tokenId The licence request.
    /// @param phase The new phase.
    function setPhase(uint256 tokenId, Phase phase) external;

    /// @notice Sets, once, the approval registry notified of new versions under review. Only DEFAULT_ADMIN_ROLE.
    /// @param registry The approval registry (not zero).
    function setReviewRegistry(address registry) external;

    /// @notice The record of a hash in a request; reverts when the request has no version with this hash.
    /// @param tokenId The licence request.
    /// @param sha256Hash The SHA-256 hash of a document version.
    /// @return anchor The record: request, document, version, block and timestamp of the anchoring.
    /// @return isLatest Whether this is still the latest version of its document.
    function anchorOf(uint256 tokenId, bytes32 sha256Hash)
        external
        view
        returns (Anchor memory anchor, bool isLatest);

    /// @notice The phase, number of documents and latest version of each document of a token.
    /// @param tokenId The licence request.
    /// @return phase The document phase.
    /// @return count The number of documents (0..16).
    /// @return latestVersions The latest version of each document, by document index.
    function documentsOf(uint256 tokenId)
        external
        view
        returns (Phase phase, uint8 count, uint16[] memory latestVersions);

    /// @notice The same as `documentsOf`, packed in one word for contracts:
    /// bits 0-7 phase, 8-15 count, then 15 bits per document index (latest version).
    /// @param tokenId The licence request.
    /// @return The packed word (0 for a request without documents).
    function packedDocumentsOf(uint256 tokenId) external view returns (uint256);

    /// @notice Checks the documents a decision says it reviewed against the latest anchored versions.
    /// @param tokenId The licence request.
    /// @param reviewedMask The documents reviewed: bit i = document index i (0 = every document of the request).
    /// @param hashes The SHA-256 the decision names, one per reviewed document, by ascending index.
    /// @return mask The documents covered (`reviewedMask`, or every document when it is 0).
    /// @return packed The request's packed document word (phase, count, latest versions).
    /// @return mismatch The first index whose hash is not its latest anchored version (or that has none in
    /// `hashes`; the document count when `hashes` has more); 255 when every hash matches.
    function checkReviewed(uint256 tokenId, uint16 reviewedMask, bytes32[] calldata hashes)
        external
        view
        returns (uint16 mask, uint256 packed, uint8 mismatch);
}
