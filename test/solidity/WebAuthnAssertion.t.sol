// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {TestBase} from "./Vm.sol";
import {DepartmentPasskeyAccount} from "../../contracts/DepartmentPasskeyAccount.sol";
import {WebAuthnAssertion} from "../../contracts/libraries/WebAuthnAssertion.sol";

/// @notice External wrapper so the WebAuthnAssertion library can be fuzzed directly.
contract WebAuthnAssertionHarness {
    function verify(bytes32 challenge, WebAuthnAssertion.Assertion memory assertion, bytes32 qx, bytes32 qy)
        external
        view
        returns (bool)
    {
        return WebAuthnAssertion.verify(challenge, assertion, qx, qy);
    }
}

/// @notice Whatever a relayer sends, the passkey checks answer "no" without reverting: indexes out of range, short
/// or random authenticator data and client data, random signatures, malformed account signatures.
contract WebAuthnAssertionFuzzTest is TestBase {
    // The P-256 generator: a valid public key no one's assertion is for.
    bytes32 private constant _GX = 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296;
    bytes32 private constant _GY = 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5;

    WebAuthnAssertionHarness private _harness;
    DepartmentPasskeyAccount private _account;

    function setUp() public {
        _harness = new WebAuthnAssertionHarness();
        bytes[] memory keys = new bytes[](1);
        keys[0] = abi.encodePacked(_GX, _GY);
        _account = new DepartmentPasskeyAccount(keys, 1);
    }

    function testFuzz_anyAssertionFieldsAreRefusedWithoutReverting(
        bytes32 challenge,
        bytes32 r,
        bytes32 s,
        uint256 challengeIndex,
        uint256 typeIndex,
        bytes calldata authenticatorData,
        string calldata clientDataJSON
    ) public view {
        WebAuthnAssertion.Assertion memory assertion =
            WebAuthnAssertion.Assertion(r, s, challengeIndex, typeIndex, authenticatorData, clientDataJSON);
        require(!_harness.verify(challenge, assertion, _GX, _GY), "a random assertion verified");
    }

    function testFuzz_wellFormedJsonWithWrongIndexesIsRefused(bytes32 challenge, uint256 challengeIndex, uint256 typeIndex)
        public
        view
    {
        // solhint-disable-next-line quotes
        string memory json = '{"type":"webauthn.get","challenge":"AAAA","origin":"https://licences.example"}';
        bytes memory authenticatorData = abi.encodePacked(bytes32(0), bytes1(0x05), bytes4(0));
        WebAuthnAssertion.Assertion memory assertion =
            WebAuthnAssertion.Assertion(bytes32(uint256(1)), bytes32(uint256(1)), challengeIndex, typeIndex, authenticatorData, json);
        require(!_harness.verify(challenge, assertion, _GX, _GY), "a wrong challenge verified");
    }

    function testFuzz_anyAccountSignatureIsInvalidWithoutReverting(bytes32 hash, bytes calldata signature) public view {
        require(_account.isValidSignature(hash, signature) == bytes4(0xffffffff), "a random signature was valid");
    }
}
