// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Licence token: one soulbound ERC-721 per licence request, carrying the licence's lifecycle.
/// @notice Status, reason, pinned workflow version and expiry live in the same storage slot as the
/// owner, so one call (`licence` / `validityOf`) tells an auditor everything about a licence.
interface ILicenceToken {
    /// @notice Lifecycle of a licence request. `Expired` is not stored: it is `Approved` past `expiresAt`.
    enum Status {
        None,
        Draft,
        Submitted,
        PendingResubmission,
        Approved,
        Rejected,
        Cancelled,
        Suspended,
        Revoked
    }

    /// @notice Verdict of `validityOf`: is the licence valid now, and if not, why not.
    enum Validity {
        Unknown,
        Valid,
        NotIssued,
        Expired,
        Suspended,
        Revoked
    }

    /// @notice Everything the chain holds about one licence, packed into one slot.
    struct Licence {
        address owner; // custodial address of the applicant
        Status status;
        uint8 reasonCode; // reason of the last rejection, suspension or revocation (0: none)
        uint32 workflowId; // workflow version pinned at creation
        uint40 expiresAt; // set at issuance; 0 while not issued or when the licence never expires
    }

    /// @notice The latest anchor of one status list: the SHA-256 of each of its three decoded lists (what a served,
    /// signed list must hash to), numbered per list.
    /// @dev List `n` holds the licences with token ids n * 131,072 .. (n + 1) * 131,072 - 1, each at index
    /// tokenId mod 131,072. Digests of a list with no anchor are zero (sequence 0).
    struct StatusListAnchor {
        bytes32 revocation; // W3C Bitstring Status List, statusPurpose "revocation" (1 bit: revoked)
        bytes32 suspension; // W3C Bitstring Status List, statusPurpose "suspension" (1 bit: suspended)
        bytes32 tokenStatus; // IETF Token Status List (2 bits: 0 valid, 1 revoked, 2 suspended)
        uint64 sequence; // 1 for the list's first anchor, one more for each next one (0: never anchored)
        uint64 blockNumber; // the block the anchor was recorded in
    }

    /// @notice A licence request was created: `tokenId` minted to `owner`, pinned to `workflowId`.
    /// @param tokenId The licence request.
    /// @param owner The applicant's custodial address.
    /// @param workflowId The workflow version the request is pinned to.
    /// @param applicantCommitment keccak256(salt ‖ applicant id): proves, with the salt the holder keeps, whose
    /// licence this is, without naming anyone on chain (zero: none recorded).
    event LicenceMinted(
        uint256 indexed tokenId, address indexed owner, uint32 indexed workflowId, bytes32 applicantCommitment
    );

    /// @notice The licence's status changed from `from` to `to` by `actor` (a role holder or the approval registry).
    /// @param tokenId The licence.
    /// @param from The previous status.
    /// @param to The new status.
    /// @param reasonCode The reason recorded with the new status (0: none).
    /// @param actor The caller: an ADMIN_ROLE holder or the approval registry.
    event LicenceStatusChanged(
        uint256 indexed tokenId,
        Status from,
        Status to,
        uint8 reasonCode,
        address indexed actor
    );

    /// @notice The licence was issued (final approval) at `issuedAt`; it expires at `expiresAt` (0: never).
    /// @param tokenId The licence.
    /// @param issuedAt Block time of the issuance.
    /// @param expiresAt The expiry (0: never).
    event LicenceIssued(uint256 indexed tokenId, uint40 issuedAt, uint40 expiresAt);

    /// @notice New requests of `requestType` are pinned to `workflowId` (0: no active workflow).
    /// @param requestType The request type, e.g. "BUILDING_PERMIT".
    /// @param workflowId The active workflow version (0: none).
    event ActiveWorkflowSet(bytes32 indexed requestType, uint32 indexed workflowId);

    /// @notice Status list `list` was anchored: served lists must hash (SHA-256 of the decoded bytes) to these digests
    /// until its next anchor.
    /// @param list The list number (token id div 131,072).
    /// @param sequence The anchor's number for this list: 1, 2, 3, … without gaps.
    /// @param revocation SHA-256 of the decoded W3C revocation bitstring.
    /// @param suspension SHA-256 of the decoded W3C suspension bitstring.
    /// @param tokenStatus SHA-256 of the decoded IETF Token Status List.
    event StatusListAnchored(
        uint32 indexed list, uint64 indexed sequence, bytes32 revocation, bytes32 suspension, bytes32 tokenStatus
    );

    /// @notice The base of `tokenURI` changed.
    /// @param baseURI The new prefix of `tokenURI`.
    event BaseURISet(string baseURI);

    /// @dev Every transfer and approval path reverts: the token is soulbound (ERC-5192).
    /// @param tokenId The licence that was to move or be approved.
    error LicenceSoulbound(uint256 tokenId);

    /// @dev No operator can be approved for an owner's licences: the token is soulbound (ERC-5192).
    /// @param operator The operator that was to be approved (or revoked).
    error LicenceSoulboundOperator(address operator);

    /// @dev Token ids are 1 .. 2^40-1 so that they pack beside the other registries' records.
    error LicenceInvalidTokenId(uint256 tokenId);

    /// @dev A token with this id already exists.
    error LicenceAlreadyExists(uint256 tokenId);

    /// @dev No workflow is active for the request type, so no request of that type can be created.
    error LicenceNoActiveWorkflow(bytes32 requestType);

    /// @dev The status change `from` -> `to` is not part of the lifecycle.
    error LicenceInvalidTransition(uint256 tokenId, Status from, Status to);

    /// @dev Suspensions and revocations must carry a non-zero reason code.
    error LicenceReasonRequired(uint256 tokenId);

    /// @dev The expiry of an issued licence must lie in the future (or be 0 for no expiry).
    error LicenceInvalidExpiry(uint256 tokenId, uint40 expiresAt);

    /// @dev Only the approval registry wired at deployment drives the review lifecycle.
    /// @param caller The address that tried.
    error LicenceUnauthorizedRegistry(address caller);

    /// @dev The approval registry is set once, at deployment, and is not zero.
    /// @param registry The registry already set (or the zero address offered).
    error LicenceApprovalRegistryFixed(address registry);

    /// @dev No token id can fall in status list `list`: ids stop at 2^40 - 1, in list `lastList`.
    /// @param list The list number offered.
    /// @param lastList The last list a token id can fall in.
    error StatusListOutOfRange(uint32 list, uint32 lastList);

    /// @dev The anchor's sequence is not the list's next one: another anchor landed since it was computed.
    /// @param list The list.
    /// @param expected The list's next sequence.
    /// @param sequence The sequence offered.
    error StatusListAnchorOutOfOrder(uint32 list, uint64 expected, uint64 sequence);

    /// @dev No role goes to a department's wallet.
    /// @param account The department wallet.
    error LicenceRoleToDepartmentWallet(address account);

    /// @notice The approval registry driving the review lifecycle was wired, once and for good.
    /// @param registry The approval registry.
    event ApprovalRegistrySet(address indexed registry);

    /// @notice Mints a Draft licence request to `to`, pinned to the active workflow version of `requestType`.
    /// @dev Only OPERATOR_ROLE. Emits Transfer, Locked and LicenceMinted.
    /// @param to The applicant's custodial address (not zero).
    /// @param tokenId The new token's id, 1 .. 2^40-1, not minted yet.
    /// @param requestType The request type, e.g. "BUILDING_PERMIT" (with an active workflow).
    /// @param applicantCommitment keccak256(salt ‖ applicant id), recorded in LicenceMinted only (no storage).
    function mint(address to, uint256 tokenId, bytes32 requestType, bytes32 applicantCommitment) external;

    /// @notice Moves a request along the review lifecycle (submit, request changes, resubmit, reject, cancel).
    /// @dev Only the approval registry. Approved is reached through `issue` only.
    /// @param tokenId The licence request.
    /// @param to The new status: Draft -> Submitted or Cancelled; Submitted -> PendingResubmission or Rejected;
    /// PendingResubmission -> Submitted or Cancelled.
    /// @param reasonCode The reason recorded with the new status (0: none).
    /// @return workflowId The workflow version the request is pinned to.
    function transition(uint256 tokenId, Status to, uint8 reasonCode) external returns (uint32 workflowId);

    /// @notice Issues the licence after the pinned workflow completed: Submitted -> Approved.
    /// @dev Only the approval registry.
    /// @param tokenId The licence request (Submitted).
    /// @param expiresAt The expiry, in the future (0: never expires).
    function issue(uint256 tokenId, uint40 expiresAt) external;

    /// @notice Suspends an issued licence. Only ADMIN_ROLE.
    /// @param tokenId The licence (Approved).
    /// @param reasonCode The reason of the suspension (not zero).
    function suspend(uint256 tokenId, uint8 reasonCode) external;

    /// @notice Lifts a suspension: Suspended -> Approved. Only ADMIN_ROLE.
    /// @param tokenId The licence (Suspended).
    function reinstate(uint256 tokenId) external;

    /// @notice Revokes an issued or suspended licence for good. Only ADMIN_ROLE.
    /// @param tokenId The licence (Approved or Suspended).
    /// @param reasonCode The reason of the revocation (not zero).
    function revoke(uint256 tokenId, uint8 reasonCode) external;

    /// @notice Sets the workflow version new requests of `requestType` are pinned to. Only the approval registry.
    /// @param requestType The request type.
    /// @param workflowId The workflow version (0: no new request of that type can be created).
    function setActiveWorkflow(bytes32 requestType, uint32 workflowId) external;

    /// @notice The full on-chain record of a licence. Reverts for unknown tokens.
    /// @param tokenId The licence.
    /// @return The record: owner, status, reason, pinned workflow and expiry.
    function licence(uint256 tokenId) external view returns (Licence memory);

    /// @notice Whether the licence is valid now and, if not, why not; never reverts.
    /// @param tokenId The licence.
    /// @return validity The verdict (Unknown for a token that does not exist).
    /// @return status The stored status.
    /// @return reasonCode The reason of the last rejection, suspension or revocation.
    /// @return expiresAt The expiry (0: not issued or never expires).
    function validityOf(uint256 tokenId)
        external
        view
        returns (Validity validity, Status status, uint8 reasonCode, uint40 expiresAt);

    /// @notice The workflow version new requests of `requestType` are pinned to (0: none).
    /// @param requestType The request type.
    /// @return The active workflow version (0: none).
    function activeWorkflowOf(bytes32 requestType) external view returns (uint32);

    /// @notice Records the digests of status list `list` as they are now, after a change of status of one of its
    /// licences. Only OPERATOR_ROLE: the platform's key that serves the lists. Emits StatusListAnchored.
    /// @dev `sequence` must be the list's current sequence plus one: an anchor computed before another one landed is
    /// refused rather than recorded over a newer one.
    /// @param list The list number, at most (2^40 - 1) div 131,072.
    /// @param sequence The list's next sequence (`statusListAnchorOf(list).sequence + 1`).
    /// @param revocation SHA-256 of the decoded W3C revocation bitstring.
    /// @param suspension SHA-256 of the decoded W3C suspension bitstring.
    /// @param tokenStatus SHA-256 of the decoded IETF Token Status List.
    function anchorStatusList(uint32 list, uint64 sequence, bytes32 revocation, bytes32 suspension, bytes32 tokenStatus)
        external;

    /// @notice The latest anchor of status list `list` (all zero when it has none).
    /// @param list The list number.
    /// @return The three digests, the anchor's sequence and its block.
    function statusListAnchorOf(uint32 list) external view returns (StatusListAnchor memory);

    /// @notice Wires, once, the approval registry that drives the review lifecycle. Only DEFAULT_ADMIN_ROLE, during
    /// deployment: no role can later make another address the registry.
    /// @param registry The approval registry (not zero).
    function setApprovalRegistry(address registry) external;

    /// @notice The approval registry that drives the review lifecycle (zero until wired).
    /// @return The approval registry.
    function approvalRegistry() external view returns (address);
}
