/**
 * Typed view calls over the generated `as const` ABIs (viem encodes the call and decodes the result, so function
 * names, arguments and result fields are checked at compile time), sent through the gateway's `call` so that an
 * unreachable node is a 503 and a revert is a decoded ContractRevertError.
 */
import {
  type Abi,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
} from "viem";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../../abis/index.ts";

/** What a typed read needs: the gateway's read-only call. */
export interface ContractCaller {
  call(to: string, data: string, blockTag?: number | string): Promise<string>;
}

type View = "pure" | "view";

/** Calls view `functionName` of the contract at `address` and decodes its result, typed from `abi`. */
export async function readContract<const abi extends Abi, name extends ContractFunctionName<abi, View>>(
  caller: ContractCaller,
  address: string,
  abi: abi,
  functionName: name,
  args: ContractFunctionArgs<abi, View, name>,
  blockTag?: number | string,
): Promise<ContractFunctionReturnType<abi, View, name>> {
  // viem's generic parameter lists are too deep for TypeScript to relate here; the signature above is the check.
  const data = encodeFunctionData({ abi, functionName, args } as never);
  const result = await caller.call(address, data, blockTag);
  return decodeFunctionResult({ abi, functionName, data: result as Hex } as never) as ContractFunctionReturnType<
    abi,
    View,
    name
  >;
}

/**
 * `caller`, asking at `latest` when the node does not have the state of the block asked for (anvil restarted from
 * a snapshot, Besu past its retained layers): for a reader of past blocks, the latest state is the best answer left.
 */
export function atBlockOrLatest(caller: ContractCaller): ContractCaller {
  return {
    call: (to, data, blockTag) =>
      caller.call(to, data, blockTag).catch((error: unknown) => {
        if (blockTag === undefined || blockTag === "latest") throw error;
        return caller.call(to, data, "latest");
      }),
  };
}

/** ApprovalRegistry.progressOf: the request's review record (Progress), small integers as numbers. */
export const progressOf = (caller: ContractCaller, registry: string, tokenId: bigint, blockTag?: number | string) =>
  readContract(caller, registry, ApprovalRegistryAbi, "progressOf", [tokenId], blockTag);

/** ApprovalRegistry.pendingDepartmentsOf: the departments that can decide now (in turn, for SEQUENTIAL stages). */
export const pendingDepartmentsOf = (
  caller: ContractCaller,
  registry: string,
  tokenId: bigint,
  blockTag?: number | string,
) => readContract(caller, registry, ApprovalRegistryAbi, "pendingDepartmentsOf", [tokenId], blockTag);

/** ApprovalRegistry.stage: stage `stage` of workflow version `workflowId` as registered (rules, timeout, departments). */
export const workflowStage = (
  caller: ContractCaller,
  registry: string,
  workflowId: number,
  stage: number,
  blockTag?: number | string,
) => readContract(caller, registry, ApprovalRegistryAbi, "stage", [workflowId, stage], blockTag);

/** ApprovalRegistry.decisionsOf: each department of a stage, its decision (DecisionStatus) and reviewed mask. */
export const decisionsOf = (caller: ContractCaller, registry: string, tokenId: bigint, stage: number) =>
  readContract(caller, registry, ApprovalRegistryAbi, "decisionsOf", [tokenId, stage]);

/** ApprovalRegistry.departmentRecord: code, wallet, custody, active flag, next signed-decision nonce, pending change. */
export const departmentRecord = (caller: ContractCaller, registry: string, departmentId: number) =>
  readContract(caller, registry, ApprovalRegistryAbi, "departmentRecord", [departmentId]);

/** LicenceToken.validityOf: [validity, status, reasonCode, expiresAt]. */
export const validityOf = (caller: ContractCaller, token: string, tokenId: bigint) =>
  readContract(caller, token, LicenceTokenAbi, "validityOf", [tokenId]);

/** LicenceToken.ownerOf (reverts for a token that does not exist). */
export const ownerOf = (caller: ContractCaller, token: string, tokenId: bigint) =>
  readContract(caller, token, LicenceTokenAbi, "ownerOf", [tokenId]);

/** DocumentRegistry.anchorOf: a hash's record in a request, and whether it is its document's latest version. */
export const anchorOf = (caller: ContractCaller, documents: string, tokenId: bigint, sha256Hash: Hex) =>
  readContract(caller, documents, DocumentRegistryAbi, "anchorOf", [tokenId, sha256Hash]);

/** ApprovalRegistry.eip712Domain (EIP-5267): the domain of decisions and key proofs, with the deployment's salt. */
export const eip712Domain = (caller: ContractCaller, registry: string) =>
  readContract(caller, registry, ApprovalRegistryAbi, "eip712Domain", []);
