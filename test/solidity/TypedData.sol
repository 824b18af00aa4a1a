// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {IERC5267} from "@openzeppelin/contracts/interfaces/IERC5267.sol";
import {Vm} from "./Vm.sol";
import {IApprovalRegistry} from "../../contracts/interfaces/IApprovalRegistry.sol";

/// @notice EIP-712 digests of the registry's typed data, written from the documented type strings
/// (IApprovalRegistry.Decision, DepartmentKey, EIP-5267 fields 0x1f) and the domain the registry reports through
/// `eip712Domain()`, never through the contracts' own hashing: a signer built from the documentation must agree
/// with the verifier.
library Typed {
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract,bytes32 salt)");
    bytes32 internal constant DOMAIN_TYPEHASH_WITHOUT_SALT =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant DECISION_TYPEHASH = keccak256(
        "Decision(uint256 tokenId,uint16 departmentId,uint8 stage,uint40 round,uint8 decision,uint8 reasonCode,"
        "uint16 reviewedMask,bytes32[] documents,bytes32 remarksHash,uint64 nonce,uint64 deadline)"
    );
    bytes32 internal constant KEY_TYPEHASH = keccak256("DepartmentKey(bytes32 code,address wallet,uint8 custody)");

    struct Domain {
        string name;
        string version;
        uint256 chainId;
        address verifyingContract;
        bytes32 salt;
    }

    /// @dev The domain `registry` reports, after checking the fields it declares: name, version, chain id,
    /// verifying contract and salt (0x1f), no extension.
    function domainOf(IERC5267 registry) internal view returns (Domain memory domain) {
        (bytes1 fields, string memory name, string memory version, uint256 chainId, address verifyingContract,
            bytes32 salt, uint256[] memory extensions) = registry.eip712Domain();
        require(fields == hex"1f", "eip712Domain: fields are not name, version, chainId, verifyingContract, salt");
        require(extensions.length == 0, "eip712Domain: unexpected extensions");
        domain = Domain(name, version, chainId, verifyingContract, salt);
    }

    function separator(Domain memory domain) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH,
                keccak256(bytes(domain.name)),
                keccak256(bytes(domain.version)),
                domain.chainId,
                domain.verifyingContract,
                domain.salt
            )
        );
    }

    /// @dev The same domain without its salt field (the shape of a domain before EIP-5267 salts).
    function separatorWithoutSalt(Domain memory domain) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH_WITHOUT_SALT,
                keccak256(bytes(domain.name)),
                keccak256(bytes(domain.version)),
                domain.chainId,
                domain.verifyingContract
            )
        );
    }

    function separatorOf(IERC5267 registry) internal view returns (bytes32) {
        return separator(domainOf(registry));
    }

    function decisionDigest(bytes32 domainSeparator, IApprovalRegistry.Decision memory d)
        internal
        pure
        returns (bytes32)
    {
        // Two encodings: twelve words at once are too many for the stack.
        bytes memory head = abi.encode(
            DECISION_TYPEHASH, d.tokenId, d.departmentId, d.stage, d.round, uint8(d.decision), d.reasonCode,
            d.reviewedMask
        );
        bytes memory tail = abi.encode(keccak256(abi.encodePacked(d.documents)), d.remarksHash, d.nonce, d.deadline);
        return keccak256(abi.encodePacked(hex"1901", domainSeparator, keccak256(bytes.concat(head, tail))));
    }

    function keyDigest(bytes32 domainSeparator, bytes32 code, address wallet, uint8 custody)
        internal
        pure
        returns (bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(KEY_TYPEHASH, code, wallet, custody));
        return keccak256(abi.encodePacked(hex"1901", domainSeparator, structHash));
    }

    /// @dev A 65-byte ECDSA signature (r, s, v) of `digest` by `privateKey`.
    function sign(Vm vm, uint256 privateKey, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(privateKey, digest);
        return abi.encodePacked(r, s, v);
    }
}
