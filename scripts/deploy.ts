/**
 * Deploys (or resumes deploying) the platform with Ignition and writes the one deployment file that the indexer
 * and the API read: deployments/<network>.json with chain id, addresses, start block and roles.
 *
 *   npm run deploy:local                       # against a running local node (CHAIN_RPC_URL, default :8545)
 *   npm run deploy -- --network besu           # BESU_RPC_URL, BESU_CHAIN_ID, BESU_DEPLOYER_KEY
 *
 * Role holders come from OPERATOR_ADDRESS, ADMIN_ADDRESS, KEEPER_ADDRESS (default: the deployer).
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { network } from "hardhat";
import LicencePlatform from "../ignition/modules/LicencePlatform.ts";

const { ethers, ignition, networkName } = await network.create();
const [deployer] = await ethers.getSigners();
const chainId = Number((await ethers.provider.getNetwork()).chainId);

const parameters = {
  LicencePlatform: {
    operator: process.env.OPERATOR_ADDRESS ?? deployer.address,
    admin: process.env.ADMIN_ADDRESS ?? deployer.address,
    keeper: process.env.KEEPER_ADDRESS ?? deployer.address,
    ...(process.env.VERIFY_BASE_URL ? { baseURI: process.env.VERIFY_BASE_URL } : {}),
  },
};

const deploymentId = process.env.DEPLOYMENT_ID ?? `chain-${chainId}`;
await discardStaleJournal(deploymentId);
const { token, documents, registry } = await ignition.deploy(LicencePlatform, { parameters, deploymentId });

const addresses = {
  LicenceToken: await token.getAddress(),
  DocumentRegistry: await documents.getAddress(),
  ApprovalRegistry: await registry.getAddress(),
};
// The indexer starts at the block that created the first contract.
const creation = await token.deploymentTransaction()?.wait();
const startBlock = creation?.blockNumber ?? (await findCreationBlock(addresses.LicenceToken));

const deployment = {
  network: networkName,
  chainId,
  startBlock,
  contracts: addresses,
  roles: parameters.LicencePlatform,
  deployer: deployer.address,
  deployedAt: new Date().toISOString(),
};
const file = process.env.DEPLOYMENT_FILE ?? path.join("deployments", `${networkName}.json`);
await mkdir(path.dirname(file), { recursive: true });
await writeFile(file, JSON.stringify(deployment, null, 2) + "\n");
console.log(`Deployed to ${networkName} (chain ${chainId}), written to ${file}`);
console.log(JSON.stringify(addresses, null, 2));

/**
 * A local chain that was reset keeps nothing, but Ignition's journal still names the old addresses and would
 * "resume" into contracts that do not exist. If the recorded token has no code, the journal is stale: drop it.
 */
async function discardStaleJournal(deploymentId: string): Promise<void> {
  const dir = path.join(process.env.IGNITION_DIR ?? "ignition", "deployments", deploymentId);
  let recorded: Record<string, string>;
  try {
    recorded = JSON.parse(await readFile(path.join(dir, "deployed_addresses.json"), "utf8"));
  } catch {
    return;
  }
  const tokenAddress = recorded["LicencePlatform#LicenceToken"];
  if (tokenAddress && (await ethers.provider.getCode(tokenAddress)) === "0x") {
    console.log(`Ignition journal ${dir} names contracts this chain does not have: starting a fresh deployment.`);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Binary search for the first block at which `address` has code (resumed deployments have no receipt). */
async function findCreationBlock(address: string): Promise<number> {
  let low = 0;
  let high = await ethers.provider.getBlockNumber();
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    const code = await ethers.provider.getCode(address, mid);
    if (code === "0x") low = mid + 1;
    else high = mid;
  }
  return low;
}
