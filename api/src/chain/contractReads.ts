/**
 * Typed view calls over the generated `as const` ABIs (ethers' Interface encodes the call and decodes the result;
 * abitype's types check function names, arguments and result fields at compile time), sent through the gateway's
 * `call` so that an unreachable node is a 503 and a revert is a decoded ContractRevertError.
 */
import type { Abi, AbiParametersToPrimitiveTypes, ExtractAbiFunction, ExtractAbiFunctionNames } from "abitype";
import type { ParamType, Result } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, type Hex, LicenceTokenAbi } from "../../../abis/index.ts";
import { type FunctionArgs, interfaceOf } from "./contractCalls.ts";

/** What a typed read needs: the gateway's read-only call. */
export interface ContractCaller {
  call(to: string, data: string, blockTag?: number | string): Promise<string>;
}

type View = "pure" | "view";
type Outputs<abi extends Abi, name extends ExtractAbiFunctionNames<abi, View>> = AbiParametersToPrimitiveTypes<
  ExtractAbiFunction<abi, name, View>["outputs"],
  "outputs"
>;
/** One output as itself, several as a tuple, none as undefined. */
export type ReadResult<abi extends Abi, name extends ExtractAbiFunctionNames<abi, View>> =
  Outputs<abi, name> extends readonly []
    ? undefined
    : Outputs<abi, name> extends readonly [infer only]
      ? only
      : Outputs<abi, name>;

/** Calls view `functionName` of the contract at `address` and decodes its result, typed from `abi`. */
export async function readContract<const abi extends Abi, name extends ExtractAbiFunctionNames<abi, View>>(
  caller: ContractCaller,
  address: string,
  abi: abi,
  functionName: name,
  args: FunctionArgs<abi, View, name>,
  blockTag?: number | string,
): Promise<ReadResult<abi, name>> {
  const iface = interfaceOf(abi);
  const fragment = iface.getFunction(functionName)!;
  const data = await caller.call(address, iface.encodeFunctionData(fragment, args as readonly unknown[]), blockTag);
  const values = iface.decodeFunctionResult(fragment, data).map((value, i) => plain(fragment.outputs[i], value));
  return (values.length === 0 ? undefined : values.length === 1 ? values[0] : values) as ReadResult<abi, name>;
}

/**
 * A decoded value in the shapes the types above give: a struct as an object of its fields, an array as an array,
 * an integer of 48 bits or fewer as a number (ethers gives every integer as a bigint).
 */
function plain(type: ParamType, value: unknown): unknown {
  if (type.isArray()) return Array.from(value as Result, (item) => plain(type.arrayChildren, item));
  if (type.isTuple()) {
    const fields = type.components.map((component, i) => plain(component, (value as Result)[i]));
    const named = type.components.every((component) => component.name);
    return named ? Object.fromEntries(type.components.map((component, i) => [component.name, fields[i]])) : fields;
  }
  const int = /^u?int(\d+)$/.exec(type.type);
  return int && Number(int[1]) <= 48 ? Number(value) : value;
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
export const departmentRecord = (
  caller: ContractCaller,
  registry: string,
  departmentId: number,
  blockTag?: number | string,
) => readContract(caller, registry, ApprovalRegistryAbi, "departmentRecord", [departmentId], blockTag);

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

/** LicenceToken.statusListAnchorOf: the latest anchor of a status list (three digests, sequence, block; zeros: none). */
export const statusListAnchorOf = (caller: ContractCaller, token: string, list: number, blockTag?: number | string) =>
  readContract(caller, token, LicenceTokenAbi, "statusListAnchorOf", [list], blockTag);
