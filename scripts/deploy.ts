/**
 * Deploys (or resumes deploying) the platform with Ignition and writes the one deployment file that the indexer
 * and the API read: deployments/<network>.json with chain id, addresses, start block and roles.
 *
 *   npm run deploy:local                       # against a running local node (CHAIN_RPC_URL, default :8545)
 *   npm run deploy -- --network besu           # BESU_RPC_URL, BESU_CHAIN_ID, BESU_DEPLOYER_KEY
 *
 * Role holders: OPERATOR_ADDRESS (the API's hot wallet), ADMIN_ADDRESS (administration) and KEEPER_ADDRESS
 * (default: the operator) are required; GOVERNANCE_ADDRESS (DEFAULT_ADMIN_ROLE, e.g. a Safe; default: the
 * deployer) takes the role from the deployer after wiring. Governance, admin and operator must be three different
 * keys. WALLET_DELAY_SECONDS (default 86,400) is the public delay of a department wallet change: at least 24 h
 * on any chain but the embedded development one (31337), the rule the auditor checks (audit/walletDelayPolicy.ts).
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ZeroHash, getAddress } from "ethers";
import { network } from "hardhat";
import LicencePlatform from "../ignition/modules/LicencePlatform.ts";
import { MIN_WALLET_DELAY_SECONDS, shortWalletDelay } from "./audit/walletDelayPolicy.ts";

const { ethers, ignition, networkName } = await network.create();
const [deployer] = await ethers.getSigners();
const chainId = Number((await ethers.provider.getNetwork()).chainId);

const operator = requiredAddress("OPERATOR_ADDRESS");
const admin = requiredAddress("ADMIN_ADDRESS");
const governance = process.env.GOVERNANCE_ADDRESS ? getAddress(process.env.GOVERNANCE_ADDRESS) : deployer.address;
const walletDelay = Number(process.env.WALLET_DELAY_SECONDS ?? MIN_WALLET_DELAY_SECONDS);
if (new Set([operator, admin, governance].map((a) => a.toLowerCase())).size !== 3) {
  throw new Error("governance, ADMIN_ADDRESS and OPERATOR_ADDRESS must be three different keys");
}
if (!Number.isInteger(walletDelay) || walletDelay < 1)
  throw new Error("WALLET_DELAY_SECONDS must be a whole number ≥ 1");
const shortDelay = shortWalletDelay(chainId, walletDelay);
if (shortDelay) throw new Error(`WALLET_DELAY_SECONDS is ${shortDelay}`);

const parameters = {
  LicencePlatform: {
    operator,
    admin,
    keeper: process.env.KEEPER_ADDRESS ? getAddress(process.env.KEEPER_ADDRESS) : operator,
    walletDelay,
    ...(process.env.VERIFY_BASE_URL ? { baseURI: process.env.VERIFY_BASE_URL } : {}),
  },
};

const deploymentId = process.env.DEPLOYMENT_ID ?? `chain-${chainId}`;
await discardStaleJournal(deploymentId);
const { token, documents, verifier, extension, registry } = await ignition.deploy(LicencePlatform, {
  parameters,
  deploymentId,
});
await handOverGovernance([token, documents, registry] as unknown as Governed[]);

const addresses = {
  LicenceToken: await token.getAddress(),
  DocumentRegistry: await documents.getAddress(),
  ApprovalRegistry: await registry.getAddress(),
  DecisionVerifier: await verifier.getAddress(),
  RegistryExtension: await extension.getAddress(),
};
// The indexer starts at the block that created the first contract.
const creation = await token.deploymentTransaction()?.wait();
const startBlock = creation?.blockNumber ?? (await findCreationBlock(addresses.LicenceToken));

const deployment = {
  network: networkName,
  chainId,
  startBlock,
  contracts: addresses,
  roles: { governance, admin, operator, keeper: parameters.LicencePlatform.keeper },
  walletDelay,
  deployer: deployer.address,
  deployedAt: new Date().toISOString(),
};
const file = process.env.DEPLOYMENT_FILE ?? path.join("deployments", `${networkName}.json`);
await mkdir(path.dirname(file), { recursive: true });
await writeFile(file, JSON.stringify(deployment, null, 2) + "\n");
console.log(`Deployed to ${networkName} (chain ${chainId}), written to ${file}`);
console.log(JSON.stringify(addresses, null, 2));

function requiredAddress(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required: governance, administration and the operator are different keys`);
  return getAddress(value);
}

/** Governance (when not the deployer) takes DEFAULT_ADMIN_ROLE on each contract; the deployer renounces it. Idempotent. */
interface Governed {
  hasRole(role: string, account: string): Promise<boolean>;
  grantRole(role: string, account: string): Promise<{ wait(): Promise<unknown> }>;
  renounceRole(role: string, account: string): Promise<{ wait(): Promise<unknown> }>;
}

async function handOverGovernance(contracts: Governed[]): Promise<void> {
  if (governance === deployer.address) return;
  for (const contract of contracts) {
    if (!(await contract.hasRole(ZeroHash, governance))) await (await contract.grantRole(ZeroHash, governance)).wait();
    if (await contract.hasRole(ZeroHash, deployer.address))
      await (await contract.renounceRole(ZeroHash, deployer.address)).wait();
  }
}

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
