/**
 * Typed encoding of the transactions the API sends, over the generated `as const` ABIs (viem encodes), so that a
 * wrong function name, a missing argument or an argument of the wrong type fails the type-check rather than the
 * chain. The gateway sends the encoded data as before; reads are chain/contractReads.ts.
 */
import { type Abi, type ContractFunctionArgs, type ContractFunctionName, encodeFunctionData, type Hex } from "viem";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../../abis/index.ts";

type Write = "nonpayable" | "payable";

/** The calldata of state-changing function `functionName` of `abi` with `args`. */
export function encodeCall<const abi extends Abi, name extends ContractFunctionName<abi, Write>>(
  abi: abi,
  functionName: name,
  args: ContractFunctionArgs<abi, Write, name>,
): Hex {
  // viem's generic parameter lists are too deep for TypeScript to relate here; the signature above is the check.
  return encodeFunctionData({ abi, functionName, args } as never);
}

/**
 * A value typed as plain text elsewhere (an address from ethers, a hash read from a row) as the hex bytes an ABI
 * argument takes. Refuses what is not whole bytes of hex, as ethers' encoder did, rather than letting viem pad it.
 */
export function hexBytes(value: string): Hex {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(value)) throw new Error(`not hex bytes: ${value}`);
  return value as Hex;
}

type Name<abi extends Abi> = ContractFunctionName<abi, Write>;
type Args<abi extends Abi, name extends Name<abi>> = ContractFunctionArgs<abi, Write, name>;

/** A call to ApprovalRegistry (departments, workflows, review). */
export const approvalRegistryCall = <name extends Name<typeof ApprovalRegistryAbi>>(
  functionName: name,
  args: Args<typeof ApprovalRegistryAbi, name>,
) => encodeCall(ApprovalRegistryAbi, functionName, args);

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
