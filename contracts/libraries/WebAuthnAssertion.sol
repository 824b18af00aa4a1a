// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base64} from "@openzeppelin/contracts/utils/Base64.sol";
import {P256} from "@openzeppelin/contracts/utils/cryptography/P256.sol";

/// @title WebAuthnAssertion: checks a WebAuthn authentication assertion (a passkey's signature) on a London EVM.
/// @notice Verifies what OpenZeppelin's WebAuthn library verifies (steps 11, 12, 16, 17, 19 and 20 of the WebAuthn
/// Level 2 assertion procedure, and the BE/BS consistency): "type" is "webauthn.get", "challenge" is the base64url
/// of the expected 32 bytes, the User Present and User Verified flags are set, and the P-256 signature over
/// authenticatorData ‖ sha256(clientDataJSON) is valid (low s) for the key. Origin, RP ID hash and signature
/// counter are left to the authenticator and the relying party, as in OpenZeppelin's library.
/// @dev OpenZeppelin's WebAuthn library copies memory with `mcopy` (Bytes.slice), which only Cancun EVMs have; this
/// one compares the JSON fields in place with keccak256. The assertion's ABI layout is OpenZeppelin's
/// `WebAuthn.WebAuthnAuth`, so a client that encodes for that library encodes for this one. P-256 is checked by
/// OpenZeppelin's P256 (the RIP-7212 precompile when a chain has it, otherwise in Solidity).
library WebAuthnAssertion {
    /// @notice One passkey assertion (the fields of OpenZeppelin's WebAuthn.WebAuthnAuth, in its order).
    struct Assertion {
        bytes32 r; // P-256 signature r
        bytes32 s; // P-256 signature s, at most n / 2
        uint256 challengeIndex; // where `"challenge":"` starts in clientDataJSON
        uint256 typeIndex; // where `"type":"` starts in clientDataJSON
        bytes authenticatorData; // rpIdHash (32) ‖ flags (1) ‖ signCount (4) ‖ extensions
        string clientDataJSON; // as the browser produced it, byte for byte
    }

    bytes1 private constant _FLAG_UP = 0x01; // user present
    bytes1 private constant _FLAG_UV = 0x04; // user verified (biometrics or PIN)
    bytes1 private constant _FLAG_BE = 0x08; // backup eligible
    bytes1 private constant _FLAG_BS = 0x10; // backed up
    uint256 private constant _FLAGS_OFFSET = 32;
    uint256 private constant _MIN_AUTHENTICATOR_DATA = 37;

    /// @notice Whether `assertion` is the passkey (qx, qy)'s assertion over `challenge`, made with the user
    /// verified.
    /// @param challenge The 32 bytes the assertion must carry as its challenge.
    /// @param assertion The assertion.
    /// @param qx The passkey's public key, x.
    /// @param qy The passkey's public key, y.
    /// @return True when every check passes.
    function verify(bytes32 challenge, Assertion memory assertion, bytes32 qx, bytes32 qy)
        internal
        view
        returns (bool)
    {
        bytes memory authenticatorData = assertion.authenticatorData;
        if (authenticatorData.length < _MIN_AUTHENTICATOR_DATA) return false;
        bytes1 flags = authenticatorData[_FLAGS_OFFSET];
        if (flags & _FLAG_UP == 0 || flags & _FLAG_UV == 0) return false;
        if (flags & _FLAG_BS != 0 && flags & _FLAG_BE == 0) return false;

        bytes memory clientData = bytes(assertion.clientDataJSON);
        // solhint-disable-next-line quotes
        if (!_hasAt(clientData, assertion.typeIndex, bytes('"type":"webauthn.get"'))) return false;
        bytes memory expectedChallenge =
            // solhint-disable-next-line quotes
            bytes.concat('"challenge":"', bytes(Base64.encodeURL(abi.encodePacked(challenge))), '"');
        if (!_hasAt(clientData, assertion.challengeIndex, expectedChallenge)) return false;

        bytes32 message = sha256(abi.encodePacked(authenticatorData, sha256(clientData)));
        return P256.verify(message, assertion.r, assertion.s, qx, qy);
    }

    /// @dev Whether `data` holds `expected` from `index` on, compared in place (no copy).
    function _hasAt(bytes memory data, uint256 index, bytes memory expected) private pure returns (bool) {
        uint256 length = expected.length;
        if (index > data.length || data.length - index < length) return false;
        bytes32 actual;
        // keccak256 of a slice of memory in place: Solidity would copy it first (with mcopy, or byte by byte).
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            actual := keccak256(add(add(data, 0x20), index), length)
        }
        return actual == keccak256(expected);
    }
}
