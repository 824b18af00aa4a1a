// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

import {IApprovalRegistry} from "./interfaces/IApprovalRegistry.sol";
import {IDecisionVerifier} from "./interfaces/IDecisionVerifier.sol";

/// @title DecisionVerifier
/// @notice Checks departments' EIP-712 decision signatures for the approval registry. No state, no owner.
/// @dev OpenZeppelin's EIP712 and SignatureChecker need a Cancun EVM (mcopy, through Strings and Bytes); we target
/// London, so the domain separator and the EIP-1271 call are written out here.
contract DecisionVerifier is IDecisionVerifier {
    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant _DOMAIN_TYPEHASH = 0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;
    // keccak256("Decision(uint256 tokenId,uint16 departmentId,uint8 decision,uint8 reasonCode,uint16 reviewedMask,
    // uint256 reviewedVersions,bytes32 remarksHash,uint64 nonce,uint64 deadline)"), the type string of
    // IApprovalRegistry.SignedDecision (test/contracts checks it against ethers' TypedDataEncoder).
    bytes32 private constant _DECISION_TYPEHASH = 0x803a684995020c3c8ee9979f2d6953f85e8eada2a7ce49165f5a36f0689c6f4a;
    bytes32 private constant _NAME_HASH = keccak256("LicenceApprovalRegistry");
    bytes32 private constant _VERSION_HASH = keccak256("1");

    /// @inheritdoc IDecisionVerifier
    function decisionDigest(IApprovalRegistry.SignedDecision calldata decision, address registry)
        public
        view
        returns (bytes32)
    {
        bytes32 domain = keccak256(abi.encode(_DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, registry));
        bytes32 structHash = keccak256(
            abi.encode(
                _DECISION_TYPEHASH,
                decision.tokenId,
                decision.departmentId,
                decision.decision,
                decision.reasonCode,
                decision.reviewedMask,
                decision.reviewedVersions,
                decision.remarksHash,
                decision.nonce,
                decision.deadline
            )
        );
        return keccak256(abi.encodePacked(hex"1901", domain, structHash));
    }

    /// @inheritdoc IDecisionVerifier
    function isValidDecision(address wallet, IApprovalRegistry.SignedDecision calldata decision, bytes calldata signature)
        external
        view
        returns (bool)
    {
        bytes32 digest = decisionDigest(decision, msg.sender);
        if (wallet.code.length == 0) {
            (address recovered, ECDSA.RecoverError failure,) = ECDSA.tryRecoverCalldata(digest, signature);
            return failure == ECDSA.RecoverError.NoError && recovered == wallet;
        }
        (bool ok, bytes memory result) =
            wallet.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
        return ok && result.length == 32 && bytes32(result) == bytes32(IERC1271.isValidSignature.selector);
    }
}
