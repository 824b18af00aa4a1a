/**
 * Typed encoding of the transactions the API sends, over the generated `as const` ABIs: ethers' Interface encodes,
 * abitype's types (erased at run time) check the function name and its arguments, so that a wrong name, a missing
 * argument or an argument of the wrong type fails the type-check rather than the chain. Reads are
 * chain/contractReads.ts.
 */
import type {
  Abi,
  AbiParametersToPrimitiveTypes,
  AbiStateMutability,
  ExtractAbiFunction,
  ExtractAbiFunctionNames,
} from "abitype";
import { Interface } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, type Hex, LicenceTokenAbi } from "../../../abis/index.ts";

type Write = "nonpayable" | "payable";

/** The arguments of function `name` of `abi` as TypeScript values. */
export type FunctionArgs<
  abi extends Abi,
  mutability extends AbiStateMutability,
  name extends ExtractAbiFunctionNames<abi, mutability>,
> = AbiParametersToPrimitiveTypes<ExtractAbiFunction<abi, name, mutability>["inputs"], "inputs">;

const interfaces = new WeakMap<Abi, Interface>();

/** ethers' Interface of a generated ABI, built once. */
export function interfaceOf(abi: Abi): Interface {
  let iface = interfaces.get(abi);
  if (!iface) interfaces.set(abi, (iface = new Interface(abi as never)));
  return iface;
}

/** The calldata of state-changing function `functionName` of `abi` with `args`. */
export function encodeCall<const abi extends Abi, name extends Name<abi>>(
  abi: abi,
  functionName: name,
  args: Args<abi, name>,
): Hex {
  return interfaceOf(abi).encodeFunctionData(functionName, args as readonly unknown[]) as Hex;
}

/**
 * A value typed as plain text elsewhere (an address from ethers, a hash read from a row) as the hex bytes an ABI
 * argument takes. Refuses what is not whole bytes of hex.
 */
export function hexBytes(value: string): Hex {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(value)) throw new Error(`not hex bytes: ${value}`);
  return value as Hex;
}

type Name<abi extends Abi> = ExtractAbiFunctionNames<abi, Write>;
type Args<abi extends Abi, name extends Name<abi>> = FunctionArgs<abi, Write, name>;

/** A call to ApprovalRegistry (departments, workflows, review). */
export const approvalRegistryCall = <name extends Name<typeof ApprovalRegistryAbi>>(
  functionName: name,
  args: Args<typeof ApprovalRegistryAbi, name>,
) => encodeCall(ApprovalRegistryAbi, functionName, args);

/** The arguments of an ApprovalRegistry call as encoded above (an outbox row's calldata). */
export const approvalRegistryArgs = (functionName: Name<typeof ApprovalRegistryAbi>, data: string) =>
  interfaceOf(ApprovalRegistryAbi).decodeFunctionData(functionName, data);

/** A call to LicenceToken (mint, suspend, reinstate, revoke). */
export const licenceTokenCall = <name extends Name<typeof LicenceTokenAbi>>(
  functionName: name,
  args: Args<typeof LicenceTokenAbi, name>,
) => encodeCall(LicenceTokenAbi, functionName, args);

/** A call to DocumentRegistry (anchors). */
export const documentRegistryCall = <name extends Name<typeof DocumentRegistryAbi>>(
  functionName: name,
  args: Args<typeof DocumentRegistryAbi, name>,
) => encodeCall(DocumentRegistryAbi, functionName, args);
