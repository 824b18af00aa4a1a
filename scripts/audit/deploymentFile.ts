/**
 * The deployment file (written by scripts/deploy.ts): chain id, the three contract addresses and the block that
 * created them. It is all the auditor needs besides an RPC endpoint and the ABIs, so it is checked strictly: a
 * wrong address would otherwise read as "no such licence" rather than as a wrong file.
 */
import { readFile } from "node:fs/promises";
import { getAddress, isAddress } from "ethers";
import type { Deployment } from "../../api/src/chain/deployment.ts";

export type { Deployment };

export async function readDeployment(file: string): Promise<Deployment> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the deployment file ${file}: ${(error as Error).message}`);
  }
  const data = parsed as Partial<Deployment> | null;
  const problems: string[] = [];
  if (!Number.isSafeInteger(data?.chainId)) problems.push("chainId is not an integer");
  if (!Number.isSafeInteger(data?.startBlock) || data!.startBlock! < 0) problems.push("startBlock is not a block number");
  const contracts = data?.contracts ?? ({} as Partial<Deployment["contracts"]>);
  for (const name of ["LicenceToken", "DocumentRegistry", "ApprovalRegistry"] as const) {
    if (typeof contracts[name] !== "string" || !isAddress(contracts[name])) problems.push(`contracts.${name} is not an address`);
  }
  if (problems.length) throw new Error(`${file} is not a deployment file: ${problems.join("; ")}`);
  return {
    chainId: data!.chainId!,
    startBlock: data!.startBlock!,
    contracts: {
      LicenceToken: getAddress(contracts.LicenceToken!),
      DocumentRegistry: getAddress(contracts.DocumentRegistry!),
      ApprovalRegistry: getAddress(contracts.ApprovalRegistry!),
    },
  };
}
