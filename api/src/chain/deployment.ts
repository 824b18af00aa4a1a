/** Where the contracts are: the deployment file written by scripts/deploy.ts, or addresses from the environment. */
import { readFile } from "node:fs/promises";
import type { Config } from "../config.ts";

export interface Deployment {
  chainId: number;
  startBlock: number;
  contracts: { LicenceToken: string; DocumentRegistry: string; ApprovalRegistry: string };
}

export async function loadDeployment(config: Config): Promise<Deployment> {
  if (config.licenceTokenAddress && config.documentRegistryAddress && config.approvalRegistryAddress) {
    return {
      chainId: config.chainId,
      startBlock: config.deploymentStartBlock,
      contracts: {
        LicenceToken: config.licenceTokenAddress,
        DocumentRegistry: config.documentRegistryAddress,
        ApprovalRegistry: config.approvalRegistryAddress,
      },
    };
  }
  let text: string;
  try {
    text = await readFile(config.deploymentFile!, "utf8");
  } catch {
    throw new Error(
      `No deployment: ${config.deploymentFile} does not exist. Deploy first (npm run deploy -- --network besu) and set DEPLOYMENT_FILE, or set LICENCE_TOKEN_ADDRESS, DOCUMENT_REGISTRY_ADDRESS and APPROVAL_REGISTRY_ADDRESS.`,
    );
  }
  const deployment = JSON.parse(text) as Deployment;
  if (deployment.chainId !== config.chainId) {
    throw new Error(`${config.deploymentFile} is for chain ${deployment.chainId} but CHAIN_ID is ${config.chainId}`);
  }
  return deployment;
}
