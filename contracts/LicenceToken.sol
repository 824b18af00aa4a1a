// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC721Metadata} from "@openzeppelin/contracts/token/ERC721/extensions/IERC721Metadata.sol";
import {IERC721Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

import {IApprovalRegistry} from "./interfaces/IApprovalRegistry.sol";
import {IERC5192} from "./interfaces/IERC5192.sol";
import {ILicenceToken} from "./interfaces/ILicenceToken.sol";
import {Roles} from "./libraries/Roles.sol";

/// @title LicenceToken
/// @notice Soulbound ERC-721 (ERC-5192): one token per licence request, minted to the applicant's custodial
/// address. Every transfer and approval path reverts.
/// @dev Implemented on OpenZeppelin's interfaces rather than its ERC721 so that the owner and the licence
/// record share one storage slot: a mint writes two slots (record, balance) instead of three.
contract LicenceToken is AccessControl, IERC721Metadata, IERC5192, IERC721Errors, ILicenceToken {
    uint256 private constant _MAX_TOKEN_ID = type(uint40).max;
    // Entries per status list (the W3C Bitstring Status List's minimum): list n holds token ids n * 2^17 ...
    uint256 private constant _STATUS_LIST_SIZE = 131_072;
    uint32 private constant _LAST_STATUS_LIST = uint32(_MAX_TOKEN_ID / _STATUS_LIST_SIZE);

    // Token name and symbol (ERC-721 metadata).
    string private _name;
    string private _symbol;
    // Prefix of tokenURI: the public verification endpoint, so a wallet links straight to it.
    string private _baseURI;
    // Licence record (owner, status, reason, pinned workflow, expiry) per token id.
    mapping(uint256 tokenId => Licence) private _licences;
    // Number of licences held per custodial address.
    mapping(address owner => uint256) private _balances;
    // Workflow version that new requests of a type are pinned to, mirrored from the approval registry.
    mapping(bytes32 requestType => uint32 workflowId) private _activeWorkflows;
    // Latest anchor of each status list.
    mapping(uint32 list => StatusListAnchor) private _statusListAnchors;
    // The approval registry: the only address that moves a licence through its review (wired once).
    address private _approvalRegistry;

    /// @dev The review lifecycle is driven by the approval registry alone: a fixed address, not a grantable role.
    modifier onlyApprovalRegistry() {
        if (msg.sender != _approvalRegistry) revert LicenceUnauthorizedRegistry(msg.sender);
        _;
    }

    constructor(string memory name_, string memory symbol_, string memory baseURI_, address admin) {
        _name = name_;
        _symbol = symbol_;
        _baseURI = baseURI_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        emit BaseURISet(baseURI_);
    }

    // ----------------------------------------------------------------------------------------------
    // Lifecycle
    // ----------------------------------------------------------------------------------------------

    /// @inheritdoc ILicenceToken
    function mint(address to, uint256 tokenId, bytes32 requestType, bytes32 applicantCommitment)
        external
        onlyRole(Roles.OPERATOR_ROLE)
    {
        if (to == address(0)) revert ERC721InvalidReceiver(address(0));
        if (tokenId == 0 || tokenId > _MAX_TOKEN_ID) revert LicenceInvalidTokenId(tokenId);
        if (_licences[tokenId].owner != address(0)) revert LicenceAlreadyExists(tokenId);
        uint32 workflowId = _activeWorkflows[requestType];
        if (workflowId == 0) revert LicenceNoActiveWorkflow(requestType);

        _licences[tokenId] = Licence({
            owner: to,
            status: Status.Draft,
            reasonCode: 0,
            workflowId: workflowId,
            expiresAt: 0
        });
        // unchecked: a balance cannot exceed the number of token ids (< 2^40).
        unchecked {
            _balances[to] += 1;
        }
        emit Transfer(address(0), to, tokenId);
        emit Locked(tokenId);
        emit LicenceMinted(tokenId, to, workflowId, applicantCommitment);
    }

    /// @inheritdoc ILicenceToken
    function transition(uint256 tokenId, Status to, uint8 reasonCode)
        external
        onlyApprovalRegistry
        returns (uint32 workflowId)
    {
        Licence storage record = _existing(tokenId);
        Status from = record.status;
        if (!_isReviewTransition(from, to)) revert LicenceInvalidTransition(tokenId, from, to);
        record.status = to;
        record.reasonCode = reasonCode;
        emit LicenceStatusChanged(tokenId, from, to, reasonCode, msg.sender);
        return record.workflowId;
    }

    /// @inheritdoc ILicenceToken
    function issue(uint256 tokenId, uint40 expiresAt) external onlyApprovalRegistry {
        Licence storage record = _existing(tokenId);
        Status from = record.status;
        if (from != Status.Submitted) revert LicenceInvalidTransition(tokenId, from, Status.Approved);
        if (expiresAt != 0 && expiresAt <= block.timestamp) revert LicenceInvalidExpiry(tokenId, expiresAt);
        record.status = Status.Approved;
        record.reasonCode = 0;
        record.expiresAt = expiresAt;
        emit LicenceStatusChanged(tokenId, from, Status.Approved, 0, msg.sender);
        emit LicenceIssued(tokenId, uint40(block.timestamp), expiresAt);
    }

    /// @inheritdoc ILicenceToken
    function suspend(uint256 tokenId, uint8 reasonCode) external onlyRole(Roles.ADMIN_ROLE) {
        _adminTransition(tokenId, Status.Approved, Status.Suspended, reasonCode);
    }

    /// @inheritdoc ILicenceToken
    function reinstate(uint256 tokenId) external onlyRole(Roles.ADMIN_ROLE) {
        Licence storage record = _existing(tokenId);
        if (record.status != Status.Suspended) {
            revert LicenceInvalidTransition(tokenId, record.status, Status.Approved);
        }
        record.status = Status.Approved;
        record.reasonCode = 0;
        emit LicenceStatusChanged(tokenId, Status.Suspended, Status.Approved, 0, msg.sender);
    }

    /// @inheritdoc ILicenceToken
    function revoke(uint256 tokenId, uint8 reasonCode) external onlyRole(Roles.ADMIN_ROLE) {
        Licence storage record = _existing(tokenId);
        // Both an issued and a suspended licence can be revoked.
        Status from = record.status == Status.Suspended ? Status.Suspended : Status.Approved;
        _adminTransition(tokenId, from, Status.Revoked, reasonCode);
    }

    /// @inheritdoc ILicenceToken
    /// @dev The bound is the last list a token id can fall in, not the highest minted token's: tracking that would
    /// cost every mint a third storage write, to refuse anchors that claim nothing about any licence.
    function anchorStatusList(uint32 list, uint64 sequence, bytes32 revocation, bytes32 suspension, bytes32 tokenStatus)
        external
        onlyRole(Roles.OPERATOR_ROLE)
    {
        if (list > _LAST_STATUS_LIST) revert StatusListOutOfRange(list, _LAST_STATUS_LIST);
        StatusListAnchor storage anchor = _statusListAnchors[list];
        // unchecked: a sequence grows by one per transaction and cannot reach 2^64.
        uint64 expected;
        unchecked {
            expected = anchor.sequence + 1;
        }
        if (sequence != expected) revert StatusListAnchorOutOfOrder(list, expected, sequence);
        anchor.revocation = revocation;
        anchor.suspension = suspension;
        anchor.tokenStatus = tokenStatus;
        anchor.sequence = sequence;
        anchor.blockNumber = uint64(block.number);
        emit StatusListAnchored(list, sequence, revocation, suspension, tokenStatus);
    }

    /// @inheritdoc ILicenceToken
    function setActiveWorkflow(bytes32 requestType, uint32 workflowId) external onlyApprovalRegistry {
        _activeWorkflows[requestType] = workflowId;
        emit ActiveWorkflowSet(requestType, workflowId);
    }

    /// @inheritdoc ILicenceToken
    function setApprovalRegistry(address registry) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (registry == address(0) || _approvalRegistry != address(0)) {
            revert LicenceApprovalRegistryFixed(_approvalRegistry);
        }
        _approvalRegistry = registry;
        emit ApprovalRegistrySet(registry);
    }

    /// @dev No role goes to a department wallet (the approval registry keeps the list once it is wired; a registry
    /// without code, as some tests wire, has no departments).
    function _grantRole(bytes32 role, address account) internal override returns (bool) {
        address registry = _approvalRegistry;
        if (registry.code.length != 0 && IApprovalRegistry(registry).isDepartmentWallet(account)) {
            revert LicenceRoleToDepartmentWallet(account);
        }
        return super._grantRole(role, account);
    }

    /// @notice Sets the prefix of `tokenURI` (normally the public verification URL). Only ADMIN_ROLE.
    /// @param baseURI_ The new prefix ("": `tokenURI` returns "").
    function setBaseURI(string calldata baseURI_) external onlyRole(Roles.ADMIN_ROLE) {
        _baseURI = baseURI_;
        emit BaseURISet(baseURI_);
    }

    // ----------------------------------------------------------------------------------------------
    // Reads
    // ----------------------------------------------------------------------------------------------

    /// @inheritdoc ILicenceToken
    function licence(uint256 tokenId) external view returns (Licence memory) {
        return _existing(tokenId);
    }

    /// @inheritdoc ILicenceToken
    function validityOf(uint256 tokenId)
        external
        view
        returns (Validity validity, Status status, uint8 reasonCode, uint40 expiresAt)
    {
        Licence memory record = _licences[tokenId];
        status = record.status;
        reasonCode = record.reasonCode;
        expiresAt = record.expiresAt;
        if (record.owner == address(0)) validity = Validity.Unknown;
        else if (status == Status.Revoked) validity = Validity.Revoked;
        else if (status == Status.Suspended) validity = Validity.Suspended;
        else if (status != Status.Approved) validity = Validity.NotIssued;
        else if (expiresAt != 0 && block.timestamp >= expiresAt) validity = Validity.Expired;
        else validity = Validity.Valid;
    }

    /// @inheritdoc ILicenceToken
    function statusListAnchorOf(uint32 list) external view returns (StatusListAnchor memory) {
        return _statusListAnchors[list];
    }

    /// @inheritdoc ILicenceToken
    function activeWorkflowOf(bytes32 requestType) external view returns (uint32) {
        return _activeWorkflows[requestType];
    }

    /// @inheritdoc ILicenceToken
    function approvalRegistry() external view returns (address) {
        return _approvalRegistry;
    }

    /// @inheritdoc IERC5192
    function locked(uint256 tokenId) external view returns (bool) {
        _existing(tokenId);
        return true;
    }

    /// @inheritdoc IERC721
    function balanceOf(address owner) external view returns (uint256) {
        if (owner == address(0)) revert ERC721InvalidOwner(address(0));
        return _balances[owner];
    }

    /// @inheritdoc IERC721
    function ownerOf(uint256 tokenId) external view returns (address) {
        return _existing(tokenId).owner;
    }

    /// @inheritdoc IERC721Metadata
    function name() external view returns (string memory) {
        return _name;
    }

    /// @inheritdoc IERC721Metadata
    function symbol() external view returns (string memory) {
        return _symbol;
    }

    /// @inheritdoc IERC721Metadata
    function tokenURI(uint256 tokenId) external view returns (string memory) {
        _existing(tokenId);
        return bytes(_baseURI).length == 0 ? "" : string.concat(_baseURI, _decimal(tokenId));
    }

    /// @inheritdoc IERC721
    function getApproved(uint256 tokenId) external view returns (address) {
        _existing(tokenId);
        return address(0);
    }

    /// @inheritdoc IERC721
    function isApprovedForAll(address, address) external pure returns (bool) {
        return false;
    }

    /// @inheritdoc IERC165
    function supportsInterface(bytes4 interfaceId) public view override(AccessControl, IERC165) returns (bool) {
        return interfaceId == type(IERC721).interfaceId || interfaceId == type(IERC721Metadata).interfaceId
            || interfaceId == type(IERC5192).interfaceId || super.supportsInterface(interfaceId);
    }

    // ----------------------------------------------------------------------------------------------
    // Soulbound: every transfer and approval path reverts
    // ----------------------------------------------------------------------------------------------

    /// @inheritdoc IERC721
    function transferFrom(address, address, uint256 tokenId) external pure {
        revert LicenceSoulbound(tokenId);
    }

    /// @inheritdoc IERC721
    function safeTransferFrom(address, address, uint256 tokenId) external pure {
        revert LicenceSoulbound(tokenId);
    }

    /// @inheritdoc IERC721
    function safeTransferFrom(address, address, uint256 tokenId, bytes calldata) external pure {
        revert LicenceSoulbound(tokenId);
    }

    /// @inheritdoc IERC721
    function approve(address, uint256 tokenId) external pure {
        revert LicenceSoulbound(tokenId);
    }

    /// @inheritdoc IERC721
    function setApprovalForAll(address operator, bool) external pure {
        revert LicenceSoulboundOperator(operator);
    }

    // ----------------------------------------------------------------------------------------------
    // Internals
    // ----------------------------------------------------------------------------------------------

    function _existing(uint256 tokenId) private view returns (Licence storage record) {
        record = _licences[tokenId];
        if (record.owner == address(0)) revert ERC721NonexistentToken(tokenId);
    }

    /// @dev Decimal form of a token id. OpenZeppelin's Strings needs a Cancun EVM (mcopy); we target London.
    function _decimal(uint256 value) private pure returns (string memory) {
        if (value == 0) return "0";
        uint256 digits;
        for (uint256 v = value; v != 0; v /= 10) ++digits;
        bytes memory buffer = new bytes(digits);
        while (value != 0) {
            --digits;
            buffer[digits] = bytes1(uint8(48 + (value % 10)));
            value /= 10;
        }
        return string(buffer);
    }

    function _adminTransition(uint256 tokenId, Status from, Status to, uint8 reasonCode) private {
        if (reasonCode == 0) revert LicenceReasonRequired(tokenId);
        Licence storage record = _existing(tokenId);
        if (record.status != from) revert LicenceInvalidTransition(tokenId, record.status, to);
        record.status = to;
        record.reasonCode = reasonCode;
        emit LicenceStatusChanged(tokenId, from, to, reasonCode, msg.sender);
    }

    /// @dev The review part of the lifecycle, driven by the approval registry. Approval goes through `issue`;
    /// suspension and revocation through the admin functions.
    function _isReviewTransition(Status from, Status to) private pure returns (bool) {
        if (from == Status.Draft) return to == Status.Submitted || to == Status.Cancelled;
        if (from == Status.Submitted) return to == Status.PendingResubmission || to == Status.Rejected;
        if (from == Status.PendingResubmission) return to == Status.Submitted || to == Status.Cancelled;
        return false;
    }
}
