/**
 * The deployment file (scripts/deploy.ts), checked strictly: a wrong address would otherwise read as "no such
 * licence" rather than as a wrong file. The type is the auditor's own: it shares no code with the platform it checks.
 */
import { readFile } from "node:fs/promises";
import { getAddress, isAddress } from "ethers";

export const CONTRACT_NAMES = ["LicenceToken", "DocumentRegistry", "ApprovalRegistry", "DecisionVerifier"] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];
/** The contracts that hold roles (AccessControl); the verifier is stateless and ownerless. */
export const ROLE_CONTRACTS = ["LicenceToken", "DocumentRegistry", "ApprovalRegistry"] as const;
export type RoleContract = (typeof ROLE_CONTRACTS)[number];

export interface DeploymentRoles {
  /** DEFAULT_ADMIN_ROLE on the three contracts (a multisig on a real network). */
  governance: string;
  /** ADMIN_ROLE on the token and the approval registry. */
  admin: string;
  /** OPERATOR_ROLE on the three contracts: the API's hot wallet. */
  operator: string;
  /** KEEPER_ROLE on the approval registry. */
  keeper: string;
}

const ROLE_KEYS = ["governance", "admin", "operator", "keeper"] as const;

export interface Deployment {
  chainId: number;
  startBlock: number;
  contracts: Record<ContractName, string>;
  roles: DeploymentRoles;
  /** Seconds between a department wallet change's proposal and the earliest time it can take effect. */
  walletDelay: number;
  /** The key that deployed and wired the contracts (DEFAULT_ADMIN_ROLE until governance took it); optional. */
  deployer?: string;
  /** Any other contract the file names (by name, as the reviewed build does): its code is checked too. */
  otherContracts?: Record<string, string>;
}

export async function readDeployment(file: string): Promise<Deployment> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the deployment file ${file}: ${(error as Error).message}`);
  }
  return parseDeployment(parsed, file);
}

export function parseDeployment(parsed: unknown, file = "the deployment file"): Deployment {
  const data = (parsed ?? {}) as Record<string, any>;
  const problems: string[] = [];
  if (!Number.isSafeInteger(data.chainId)) problems.push("chainId is not an integer");
  if (!Number.isSafeInteger(data.startBlock) || data.startBlock < 0) problems.push("startBlock is not a block number");
  const contracts = (data.contracts ?? {}) as Record<string, unknown>;
  const roles = (data.roles ?? {}) as Record<string, unknown>;
  const notAddress = (value: unknown) => typeof value !== "string" || !isAddress(value);
  for (const name of CONTRACT_NAMES)
    if (notAddress(contracts[name])) problems.push(`contracts.${name} is not an address`);
  for (const name of ROLE_KEYS) if (notAddress(roles[name])) problems.push(`roles.${name} is not an address`);
  if (!Number.isSafeInteger(data.walletDelay) || data.walletDelay < 1)
    problems.push("walletDelay is not a whole number of seconds ≥ 1");
  if (data.deployer !== undefined && notAddress(data.deployer)) problems.push("deployer is not an address");
  const others = Object.entries(contracts).filter(
    ([name, address]) => !(CONTRACT_NAMES as readonly string[]).includes(name) && typeof address === "string",
  ) as [string, string][];
  for (const [name, address] of others) if (!isAddress(address)) problems.push(`contracts.${name} is not an address`);
  if (problems.length) throw new Error(`${file} is not a deployment file: ${problems.join("; ")}`);
  const addresses = <K extends string>(names: readonly K[], of: Record<string, unknown>) =>
    Object.fromEntries(names.map((name) => [name, getAddress(of[name] as string)])) as Record<K, string>;
  return {
    chainId: data.chainId,
    startBlock: data.startBlock,
    contracts: addresses(CONTRACT_NAMES, contracts),
    roles: addresses(ROLE_KEYS, roles),
    walletDelay: data.walletDelay,
    ...(data.deployer ? { deployer: getAddress(data.deployer) } : {}),
    ...(others.length
      ? { otherContracts: Object.fromEntries(others.map(([name, address]) => [name, getAddress(address)])) }
      : {}),
  };
}
