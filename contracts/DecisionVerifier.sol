// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

import {IApprovalRegistry} from "./interfaces/IApprovalRegistry.sol";
import {IDecisionVerifier} from "./interfaces/IDecisionVerifier.sol";

/// @title DecisionVerifier
/// @notice Hashes departments' EIP-712 decisions and checks their signatures for the approval registry. No state,
/// no owner.
/// @dev OpenZeppelin's SignatureChecker needs a Cancun EVM (mcopy, through Bytes); we target London, so the
/// EIP-1271 call is written out here.
contract DecisionVerifier is IDecisionVerifier {
    // keccak256("Decision(uint256 tokenId,uint16 departmentId,uint8 stage,uint40 round,uint8 decision,
    // uint8 reasonCode,uint16 reviewedMask,bytes32[] documents,bytes32 remarksHash,uint64 nonce,uint64 deadline)"),
    // the type of IApprovalRegistry.Decision (scripts/abis checks it against the ABI, test/contracts against ethers).
    bytes32 private constant _DECISION_TYPEHASH = 0xb16d66add5e3ee36b997928e55e87b0cd82dd5c99ad3cb5bf5f435f59e2ab81d;

    // keccak256("DepartmentKey(bytes32 code,address wallet,uint8 custody)"): a department wallet's proof of its key,
    // the fields of isValidKeyProof (scripts/abis checks the hash against them).
    bytes32 private constant _KEY_TYPEHASH = 0x0089a350c2ee7f9fb52b5828eeb60c84f41593c6d67849fa8b505bf624b01973;

    /// @inheritdoc IDecisionVerifier
    function decisionDigest(IApprovalRegistry.Decision calldata decision, bytes32 domainSeparator)
        public
        pure
        returns (bytes32)
    {
        // Two parts: one abi.encode of all twelve words is too deep for the stack.
        bytes memory head = abi.encode(
            _DECISION_TYPEHASH,
            decision.tokenId,
            decision.departmentId,
            decision.stage,
            decision.round,
            decision.decision,
            decision.reasonCode,
            decision.reviewedMask
        );
        bytes32 structHash = keccak256(
            bytes.concat(
                head,
                abi.encode(
                    keccak256(abi.encodePacked(decision.documents)),
                    decision.remarksHash,
                    decision.nonce,
                    decision.deadline
                )
            )
        );
        return keccak256(abi.encodePacked(hex"1901", domainSeparator, structHash));
    }

    /// @inheritdoc IDecisionVerifier
    function isValidDecision(
        address wallet,
        IApprovalRegistry.Decision calldata decision,
        bytes32 domainSeparator,
        bytes calldata signature
    ) external view returns (bool) {
        return isValidSignature(wallet, decisionDigest(decision, domainSeparator), signature);
    }

    /// @inheritdoc IDecisionVerifier
    function isValidKeyProof(bytes32 code, address wallet, uint8 custody, bytes32 domainSeparator, bytes calldata proof)
        external
        view
        returns (bool)
    {
        bytes32 structHash = keccak256(abi.encode(_KEY_TYPEHASH, code, wallet, custody));
        return isValidSignature(wallet, keccak256(abi.encodePacked(hex"1901", domainSeparator, structHash)), proof);
    }

    /// @inheritdoc IDecisionVerifier
    function isValidSignature(address signer, bytes32 digest, bytes calldata signature) public view returns (bool) {
        if (signer.code.length == 0) {
            (address recovered, ECDSA.RecoverError failure,) = ECDSA.tryRecoverCalldata(digest, signature);
            return failure == ECDSA.RecoverError.NoError && recovered == signer;
        }
        (bool ok, bytes memory result) =
            signer.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
        return ok && result.length == 32 && bytes32(result) == bytes32(IERC1271.isValidSignature.selector);
    }
}
