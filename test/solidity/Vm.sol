// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

/// @notice The cheatcodes these tests use, declared here because forge-std is not available.
/// EDR implements them natively at the usual cheatcode address.
interface Vm {
    function prank(address msgSender) external;
    function startPrank(address msgSender) external;
    function stopPrank() external;
    function expectRevert() external;
    function expectRevert(bytes4 revertData) external; // exact match: only for errors without arguments
    function expectRevert(bytes calldata revertData) external; // full abi.encodeWithSelector(...)
    function expectPartialRevert(bytes4 selector) external; // selector-only match, ignores arguments
    function warp(uint256 newTimestamp) external;
    function assume(bool condition) external pure;
    function deal(address account, uint256 newBalance) external;
    function expectEmit(bool checkTopic1, bool checkTopic2, bool checkTopic3, bool checkData) external;
    function expectEmit(bool checkTopic1, bool checkTopic2, bool checkTopic3, bool checkData, address emitter)
        external;
    function expectEmit() external;
    function label(address account, string calldata newLabel) external;
    function addr(uint256 privateKey) external pure returns (address);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
    function assertEq(uint256 left, uint256 right, string calldata error) external pure;
    function assertEq(address left, address right) external pure;
}

/// @notice Minimal stand-in for forge-std's Test + StdInvariant: EDR reads targetContracts(),
/// targetSenders() and excludeContracts() from the test contract.
abstract contract TestBase {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    address[] private _targetedContracts;
    address[] private _targetedSenders;
    address[] private _excludedContracts;

    function targetContract(address c) internal {
        _targetedContracts.push(c);
    }

    function targetSender(address s) internal {
        _targetedSenders.push(s);
    }

    function excludeContract(address c) internal {
        _excludedContracts.push(c);
    }

    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    function targetSenders() public view returns (address[] memory) {
        return _targetedSenders;
    }

    function excludeContracts() public view returns (address[] memory) {
        return _excludedContracts;
    }

    function bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256) {
        require(min <= max, "bound: min > max");
        if (min == 0 && max == type(uint256).max) return x;
        return min + (x % (max - min + 1));
    }
}
