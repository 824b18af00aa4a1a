/**
 * Who governs: the DEFAULT_ADMIN_ROLE holders at the audited block and what each is. A Safe is reported with its
 * enabled modules, because a module acts for the Safe without the owners' signatures. Governance one key can
 * exercise alone is a finding, except on the development chain, which one key governs on purpose.
 */
import { Contract, ZeroHash, getAddress, type JsonRpcProvider } from "ethers";
import { licenceTokenAbi } from "./contractViews.ts";
import { ROLE_CONTRACTS, type Deployment, type RoleContract } from "./deploymentFile.ts";
import type { RoleHolder } from "./roleHistory.ts";
import { DEVELOPMENT_CHAIN_ID } from "./walletDelayPolicy.ts";

export interface SafeAudit {
  /** VERSION() of the Safe, or null if it does not answer. */
  version: string | null;
  owners: string[];
  threshold: number;
  /** Enabled modules: each can make the Safe act without its owners. `isKey`: the module is an account without code. */
  modules: { address: string; isKey: boolean }[];
}

export interface GovernorAudit {
  account: string;
  /** The contracts on which it holds DEFAULT_ADMIN_ROLE at the audited block. */
  contracts: RoleContract[];
  kind: "KEY" | "SAFE" | "CONTRACT";
  safe: SafeAudit | null;
}

export interface GovernanceAudit {
  governors: GovernorAudit[];
  /** Contracts on which nobody holds DEFAULT_ADMIN_ROLE: their roles can no longer be granted or revoked. */
  ungoverned: RoleContract[];
}

const SAFE = [
  "function getOwners() view returns (address[])",
  "function getThreshold() view returns (uint256)",
  "function getModulesPaginated(address start, uint256 pageSize) view returns (address[] array, address next)",
  "function VERSION() view returns (string)",
];
const SENTINEL = "0x0000000000000000000000000000000000000001";

export async function auditGovernance(
  provider: JsonRpcProvider,
  deployment: Deployment,
  holders: RoleHolder[],
  blockTag: number,
): Promise<{ governance: GovernanceAudit; findings: string[] }> {
  const findings: string[] = [];
  const byAccount = new Map<string, RoleContract[]>();
  const ungoverned: RoleContract[] = [];
  for (const contract of ROLE_CONTRACTS) {
    const accounts = holders.filter((h) => h.contract === contract && h.role === "DEFAULT_ADMIN_ROLE");
    if (accounts.length === 0) ungoverned.push(contract);
    const roles = new Contract(deployment.contracts[contract], licenceTokenAbi, provider);
    for (const { account } of accounts) {
      if (await roles.hasRole(ZeroHash, account, { blockTag }))
        byAccount.set(account, [...(byAccount.get(account) ?? []), contract]);
      else
        findings.push(
          `the role events say ${account} holds DEFAULT_ADMIN_ROLE on ${contract}, but hasRole says it does not`,
        );
    }
  }
  const hasCode = async (address: string) => (await provider.getCode(address, blockTag)) !== "0x";
  const governors: GovernorAudit[] = [];
  for (const [account, contracts] of byAccount) {
    if (!(await hasCode(account))) {
      governors.push({ account, contracts, kind: "KEY", safe: null });
      continue;
    }
    const safe = await readSafe(new Contract(account, SAFE, provider), blockTag).catch(() => null);
    for (const module of safe ? await modulesOf(new Contract(account, SAFE, provider), blockTag) : [])
      safe!.modules.push({ address: module, isKey: !(await hasCode(module)) });
    governors.push({ account, contracts, kind: safe ? "SAFE" : "CONTRACT", safe });
  }
  return { governance: { governors, ungoverned }, findings };
}

/** The Safe's owners and threshold, or null when `safe` does not answer as a Safe does. */
async function readSafe(safe: Contract, blockTag: number): Promise<SafeAudit | null> {
  const owners = [...(await safe.getOwners({ blockTag }))].map((o: string) => getAddress(o));
  const threshold: bigint = await safe.getThreshold({ blockTag });
  if (owners.length === 0 || threshold < 1n || threshold > BigInt(owners.length)) return null;
  const version = await safe.VERSION({ blockTag }).then(String, () => null);
  return { version, owners, threshold: Number(threshold), modules: [] };
}

/** Every enabled module, page by page (the Safe's linked list ends at the sentinel). */
async function modulesOf(safe: Contract, blockTag: number): Promise<string[]> {
  const modules: string[] = [];
  for (let start = SENTINEL; ;) {
    const [page, next] = await safe.getModulesPaginated(start, 50, { blockTag });
    modules.push(...[...page].map((m: string) => getAddress(m)));
    if (page.length === 0 || getAddress(next) === getAddress(SENTINEL)) return modules;
    start = next;
  }
}

/** Findings off the development chain, notes on it: governance that one key can exercise alone. */
export function governanceFindings(
  chainId: number,
  governance: GovernanceAudit,
): { findings: string[]; notes: string[] } {
  const development = chainId === DEVELOPMENT_CHAIN_ID;
  const facts: string[] = [];
  for (const g of governance.governors) {
    const on = g.contracts.join(", ");
    if (g.kind === "KEY")
      facts.push(
        development
          ? `governance is a single development key: everything happens at once (${g.account} holds DEFAULT_ADMIN_ROLE on ${on})`
          : `${g.account} governs ${on} and is a single key (an account without code): one key can grant any role at once; governance must be a multisig (a Safe with threshold 2 or more)`,
      );
    if (g.kind === "CONTRACT")
      facts.push(
        `${g.account} governs ${on} and is a contract but not a Safe (no getOwners/getThreshold): who can act for it cannot be established`,
      );
    if (g.safe?.threshold === 1)
      facts.push(
        `the Safe ${g.account} that governs ${on} needs 1 of its ${g.safe.owners.length} owners' signatures: any one owner can act alone`,
      );
    for (const module of g.safe?.modules.filter((m) => m.isKey) ?? [])
      facts.push(
        `the Safe ${g.account} that governs ${on} has the module ${module.address} enabled, a single key that can act for the Safe without its owners`,
      );
  }
  const notes = governance.ungoverned.map(
    (contract) => `nobody holds DEFAULT_ADMIN_ROLE on ${contract}: its roles can no longer be granted or revoked`,
  );
  return development ? { findings: [], notes: [...facts, ...notes] } : { findings: facts, notes };
}
