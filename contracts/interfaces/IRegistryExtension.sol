// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IApprovalRegistry} from "./IApprovalRegistry.sol";

/// @title Registry extension: the approval registry's cold code.
/// @notice Stateless and ownerless: the approval registry holds its address as an immutable and asks it to check a
/// new workflow stage or department wallet (reading back from the calling registry: `departmentByCode`,
/// `isDepartmentWallet`, the wired contracts' roles) and to unpack a stage's ledger for the registry's views. Kept
/// apart from the registry only so that the registry stays under the EIP-170 code size limit: nothing here is on
/// the path of a decision.
interface IRegistryExtension {
    /// @notice Checks a workflow version as ApprovalRegistry.registerWorkflow receives it (same arguments) and
    /// compiles its stages; reverts with the registry's Workflow* and Department* errors when it breaks a rule.
    /// @param workflowType The request type (not zero).
    /// @param definitionHash keccak256 of the full JSON definition (not checked).
    /// @param validitySeconds The licence lifetime (at most 2^32-1).
    /// @param stages The stages (1..MAX_STAGES).
    /// @return compiled The stages as stored.
    function compileWorkflow(
        bytes32 workflowType,
        bytes32 definitionHash,
        uint64 validitySeconds,
        IApprovalRegistry.StageInput[] calldata stages
    ) external view returns (IApprovalRegistry.Stage[] memory compiled);

    /// @notice Stage `index` as the calling registry stores it; reverts with the registry's Workflow* and
    /// Department* errors when the input breaks a rule.
    /// @param index The stage's position in the workflow (named in errors).
    /// @param input The stage as registered.
    /// @return compiled The stored stage: department ids packed 16 bits per position, mandatory mask resolved.
    function compileStage(uint256 index, IApprovalRegistry.StageInput calldata input)
        external
        view
        returns (IApprovalRegistry.Stage memory compiled);

    /// @notice Reverts unless `wallet` can become a department wallet of the calling registry: not zero, no
    /// department's, and holding no role on the registry, its licence token or its document registry.
    /// @param wallet The proposed wallet.
    function checkNewWallet(address wallet) external view;

    /// @notice A stage's ledger unpacked, as ApprovalRegistry.decisionsOf returns it.
    /// @param definition The stage.
    /// @param ledger The stage's ledger (StageLedger layout).
    /// @return departmentIds The department of each position.
    /// @return statuses The decision of each position.
    /// @return reviewedMasks The documents each position reviewed.
    function unpackDecisions(IApprovalRegistry.Stage calldata definition, uint256 ledger)
        external
        pure
        returns (
            uint16[] memory departmentIds,
            IApprovalRegistry.DecisionStatus[] memory statuses,
            uint16[] memory reviewedMasks
        );

    /// @notice The departments that can decide now in a stage under review, as ApprovalRegistry.pendingDepartmentsOf
    /// returns them.
    /// @param definition The current stage.
    /// @param ledger Its ledger.
    /// @return departmentIds The departments, in the stage's order.
    function pendingDepartments(IApprovalRegistry.Stage calldata definition, uint256 ledger)
        external
        pure
        returns (uint16[] memory departmentIds);

    /// @notice The calling registry's EIP-5267 domain: name "LicenceApprovalRegistry", version "2", this chain,
    /// the caller as verifying contract, and `salt`.
    /// @param salt The registry's per-deployment salt.
    /// @return fields 0x1f: name, version, chainId, verifyingContract, salt.
    /// @return name The domain name.
    /// @return version The domain version.
    /// @return chainId The chain id.
    /// @return verifyingContract The calling registry.
    /// @return salt_ The salt.
    /// @return extensions None.
    function eip712Domain(bytes32 salt)
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt_,
            uint256[] memory extensions
        );
}
