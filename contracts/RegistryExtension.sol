// SPDX-License-Identifier: MIT
pragma solidity 0.8.34;

import {IApprovalRegistry} from "./interfaces/IApprovalRegistry.sol";
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";

import {IRegistryExtension} from "./interfaces/IRegistryExtension.sol";
import {Roles} from "./libraries/Roles.sol";
import {StageLedger} from "./libraries/StageLedger.sol";

/// @title The approval registry's wiring getters (public immutables of ApprovalRegistry).
/// @notice Read by RegistryExtension to find the contracts whose roles a new department wallet must not hold.
interface IWiredRegistry {
    /// @notice The licence token the registry drives.
    /// @return The token's address.
    function licenceToken() external view returns (address);
    /// @notice The document registry whose versions decisions review.
    /// @return The document registry's address.
    function documentRegistry() external view returns (address);
}

/// @title RegistryExtension
/// @notice The approval registry's cold code: checks a new workflow stage or department wallet for the registry that
/// calls it, and unpacks stage ledgers for its views. No state, no owner.
contract RegistryExtension is IRegistryExtension {
    using StageLedger for uint256;

    /// @notice Maximum number of departments of a stage (the registry's MAX_STAGE_DEPARTMENTS).
    uint8 public constant MAX_STAGE_DEPARTMENTS = 8;

    /// @notice Maximum number of stages of a workflow (the registry's MAX_STAGES).
    uint8 public constant MAX_STAGES = 16;

    /// @inheritdoc IRegistryExtension
    function compileWorkflow(
        bytes32 workflowType,
        bytes32,
        uint64 validitySeconds,
        IApprovalRegistry.StageInput[] calldata stages
    ) external view returns (IApprovalRegistry.Stage[] memory compiled) {
        if (workflowType == bytes32(0)) revert IApprovalRegistry.WorkflowInvalidType();
        if (validitySeconds > type(uint32).max) revert IApprovalRegistry.WorkflowInvalidValidity(validitySeconds);
        uint256 stageCount = stages.length;
        if (stageCount == 0 || stageCount > MAX_STAGES) revert IApprovalRegistry.WorkflowInvalidStageCount(stageCount);
        compiled = new IApprovalRegistry.Stage[](stageCount);
        for (uint256 i = 0; i < stageCount; ++i) compiled[i] = compileStage(i, stages[i]);
    }

    /// @inheritdoc IRegistryExtension
    function compileStage(uint256 index, IApprovalRegistry.StageInput calldata input)
        public
        view
        returns (IApprovalRegistry.Stage memory compiled)
    {
        uint256 count = input.departments.length;
        if (count == 0 || count > MAX_STAGE_DEPARTMENTS) {
            revert IApprovalRegistry.WorkflowInvalidStageDepartments(index, count);
        }
        uint128 ids;
        for (uint256 p = 0; p < count; ++p) {
            bytes32 code = input.departments[p];
            // Reverts DepartmentUnknown for a code the registry does not know.
            (uint16 departmentId,, bool active) = IApprovalRegistry(msg.sender).departmentByCode(code);
            if (!active) revert IApprovalRegistry.DepartmentInactive(departmentId);
            for (uint256 q = 0; q < p; ++q) {
                if (uint16(ids >> (16 * q)) == departmentId) {
                    revert IApprovalRegistry.WorkflowDuplicateDepartment(index, code);
                }
            }
            ids |= uint128(departmentId) << uint128(16 * p);
        }
        uint8 everyone = uint8((1 << count) - 1);
        if (input.mandatoryMask & ~everyone != 0) {
            revert IApprovalRegistry.WorkflowInvalidMandatoryMask(index, input.mandatoryMask);
        }
        bool isThreshold = input.completion == IApprovalRegistry.Completion.Threshold;
        if (isThreshold ? (input.threshold == 0 || input.threshold > count) : input.threshold != 0) {
            revert IApprovalRegistry.WorkflowInvalidThreshold(index, input.threshold);
        }
        if ((input.timeoutSeconds == 0) != (input.onTimeout == IApprovalRegistry.TimeoutAction.None)) {
            revert IApprovalRegistry.WorkflowInvalidTimeout(index);
        }
        compiled = IApprovalRegistry.Stage({
            executionType: input.executionType,
            completion: input.completion,
            threshold: input.threshold,
            onTimeout: input.onTimeout,
            onRejection: input.onRejection,
            departmentCount: uint8(count),
            mandatoryMask: input.completion == IApprovalRegistry.Completion.All ? everyone : input.mandatoryMask,
            timeoutSeconds: input.timeoutSeconds,
            departmentIds: ids
        });
    }

    /// @inheritdoc IRegistryExtension
    function checkNewWallet(address wallet) external view {
        IApprovalRegistry registry = IApprovalRegistry(msg.sender);
        if (wallet == address(0)) revert IApprovalRegistry.DepartmentInvalidWallet(wallet);
        if (registry.isDepartmentWallet(wallet)) revert IApprovalRegistry.DepartmentWalletInUse(wallet);
        IWiredRegistry wired = IWiredRegistry(msg.sender);
        address[3] memory governed = [msg.sender, wired.licenceToken(), wired.documentRegistry()];
        bytes32[4] memory roles = [bytes32(0), Roles.ADMIN_ROLE, Roles.OPERATOR_ROLE, Roles.KEEPER_ROLE];
        for (uint256 c = 0; c < 3; ++c) {
            for (uint256 r = 0; r < 4; ++r) {
                if (IAccessControl(governed[c]).hasRole(roles[r], wallet)) {
                    revert IApprovalRegistry.DepartmentWalletHoldsRole(wallet);
                }
            }
        }
    }

    /// @inheritdoc IRegistryExtension
    function unpackDecisions(IApprovalRegistry.Stage calldata definition, uint256 ledger)
        external
        pure
        returns (
            uint16[] memory departmentIds,
            IApprovalRegistry.DecisionStatus[] memory statuses,
            uint16[] memory reviewedMasks
        )
    {
        uint256 count = definition.departmentCount;
        departmentIds = new uint16[](count);
        statuses = new IApprovalRegistry.DecisionStatus[](count);
        reviewedMasks = new uint16[](count);
        for (uint256 p = 0; p < count; ++p) {
            departmentIds[p] = uint16(definition.departmentIds >> (16 * p));
            statuses[p] = ledger.statusAt(p);
            reviewedMasks[p] = ledger.reviewedAt(p);
        }
    }

    /// @inheritdoc IRegistryExtension
    function pendingDepartments(IApprovalRegistry.Stage calldata definition, uint256 ledger)
        external
        pure
        returns (uint16[] memory departmentIds)
    {
        uint256 count = definition.departmentCount;
        uint16[] memory found = new uint16[](count);
        uint256 n;
        if (definition.executionType == IApprovalRegistry.ExecutionType.Sequential) {
            uint256 turn = ledger.firstNotApproved(count);
            if (turn < count) found[n++] = uint16(definition.departmentIds >> (16 * turn));
        } else {
            for (uint256 p = 0; p < count; ++p) {
                IApprovalRegistry.DecisionStatus status = ledger.statusAt(p);
                if (
                    status == IApprovalRegistry.DecisionStatus.Pending
                        || status == IApprovalRegistry.DecisionStatus.ReviewRequired
                ) found[n++] = uint16(definition.departmentIds >> (16 * p));
            }
        }
        departmentIds = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) departmentIds[i] = found[i];
    }

    /// @inheritdoc IRegistryExtension
    function eip712Domain(bytes32 salt)
        external
        view
        returns (bytes1, string memory, string memory, uint256, address, bytes32, uint256[] memory extensions)
    {
        return (hex"1f", "LicenceApprovalRegistry", "2", block.chainid, msg.sender, salt, extensions);
    }
}
