/**
 * Who held which role on each contract, and when, replayed from RoleGranted and RoleRevoked (the contracts do not
 * enumerate role holders, so the events are the only record). A grant after the deployment is reported, not a
 * finding by itself: replacing the operator's hot wallet is routine, and whoever receives a role is still held to
 * every rule here.
 */
import { ZeroHash, getAddress, id } from "ethers";
import { ROLES, roleNameOf } from "../../abis/index.ts";
import { isoTime } from "./auditRecord.ts";
import { ROLE_CONTRACTS, type Deployment, type RoleContract } from "./deploymentFile.ts";
import { isBefore, where, type TimedEvent } from "./logReader.ts";

/** The platform's role ids (abis/roles.ts, generated from Roles.sol). */
export { ROLES as ROLE_IDS };
export type RoleName = keyof typeof ROLES;

/** A role's name, or its id when it is none of the platform's roles (a grant of it gives no power here). */
export function roleName(roleId: string): string {
  const found = roleNameOf(roleId);
  if (found) return found;
  return roleId.toLowerCase() === id("REGISTRY_ROLE") ? "REGISTRY_ROLE (retired)" : roleId;
}

/** One period of one account holding one role on one contract. */
export interface RoleGrantAudit extends RoleHolderKey {
  /** Who granted it (RoleGranted.sender): the deployer at construction, then a DEFAULT_ADMIN_ROLE holder. */
  grantedBy: string;
  granted: { transactionHash: string; blockNumber: number; timestamp: string };
  /** Revoked or renounced (by = the account itself), or null if still held at the audited block. */
  revoked: { transactionHash: string; blockNumber: number; timestamp: string; by: string } | null;
  /** One of the grants the deployment makes (to the keys the deployment file names, sent by the deployer). */
  fromDeployment: boolean;
}

type RoleHolderKey = { contract: RoleContract; role: string; account: string };
export type RoleHolder = RoleHolderKey & { since: string };

/** The periods during which an address was a department's wallet (from the department replay). */
export interface WalletTenure {
  wallet: string;
  departmentCode: string;
  since: TimedEvent;
  until: TimedEvent | null;
}

interface Period {
  contract: RoleContract;
  roleId: string;
  account: string;
  grant: TimedEvent;
  revoke: TimedEvent | null;
}

export class RoleHistory {
  readonly #periods: Period[] = [];
  readonly #adminChanges: TimedEvent[] = [];
  readonly #deployment: Deployment;
  readonly #contractOf: (address: string) => RoleContract | undefined;
  /** Per contract: the account the constructor gave DEFAULT_ADMIN_ROLE (its first RoleGranted). */
  readonly #deployers = new Map<RoleContract, string>();

  /** `events`: RoleGranted, RoleRevoked and RoleAdminChanged of the three contracts, in chain order (others ignored). */
  constructor(events: TimedEvent[], deployment: Deployment) {
    this.#deployment = deployment;
    this.#contractOf = (address) => ROLE_CONTRACTS.find((name) => deployment.contracts[name] === getAddress(address));
    for (const event of events) {
      const contract = this.#contractOf(event.address);
      if (!contract) continue;
      if (event.name === "RoleAdminChanged") this.#adminChanges.push(event);
      if (event.name !== "RoleGranted" && event.name !== "RoleRevoked") continue;
      const roleId = String(event.args.role).toLowerCase();
      const account = getAddress(event.args.account);
      const open = this.#periods.find(
        (p) => p.contract === contract && p.roleId === roleId && p.account === account && !p.revoke,
      );
      if (event.name === "RoleGranted") {
        // AccessControl emits RoleGranted only when the account did not hold the role.
        if (!open) this.#periods.push({ contract, roleId, account, grant: event, revoke: null });
        if (!this.#deployers.has(contract) && roleId === ZeroHash) this.#deployers.set(contract, account);
      } else if (open) {
        open.revoke = event;
      }
    }
  }

  holdsAt(
    contract: RoleContract,
    role: RoleName,
    account: string,
    event: { blockNumber: number; logIndex: number },
  ): boolean {
    const who = getAddress(account);
    return this.#periods.some(
      (p) =>
        p.contract === contract &&
        p.roleId === ROLES[role] &&
        p.account === who &&
        isBefore(p.grant, event) &&
        (!p.revoke || !isBefore(p.revoke, event)),
    );
  }

  /** The deployer of `contract`: the deployment file's, or the account its constructor made DEFAULT_ADMIN. */
  deployerOf(contract: RoleContract): string | undefined {
    return this.#deployment.deployer ?? this.#deployers.get(contract);
  }

  #fromDeployment(period: Period): boolean {
    const { roles } = this.#deployment;
    const deployer = this.deployerOf(period.contract);
    if (!deployer || getAddress(period.grant.args.sender) !== deployer) return false;
    // The first period of that (contract, role, account) only: a later re-grant is not the deployment's.
    const first = this.#periods.find(
      (p) => p.contract === period.contract && p.roleId === period.roleId && p.account === period.account,
    );
    if (first !== period) return false;
    const expected = DEPLOYMENT_GRANTS[period.contract].map((key) => [ROLES[ROLE_OF[key]], roles[key]]);
    const grants = [...expected, [ZeroHash, deployer], [ZeroHash, roles.governance]];
    return grants.some(([roleId, account]) => roleId === period.roleId && account === period.account);
  }

  grants(): RoleGrantAudit[] {
    const ref = (e: TimedEvent) => ({
      transactionHash: e.transactionHash,
      blockNumber: e.blockNumber,
      timestamp: isoTime(e.time),
    });
    return this.#periods.map((p) => ({
      contract: p.contract,
      role: roleName(p.roleId),
      account: p.account,
      grantedBy: getAddress(p.grant.args.sender),
      granted: ref(p.grant),
      revoked: p.revoke ? { ...ref(p.revoke), by: getAddress(p.revoke.args.sender) } : null,
      fromDeployment: this.#fromDeployment(p),
    }));
  }

  holders(): RoleHolder[] {
    return this.#periods
      .filter((p) => !p.revoke)
      .map((p) => ({
        contract: p.contract,
        role: roleName(p.roleId),
        account: p.account,
        since: isoTime(p.grant.time),
      }));
  }

  findings(departmentWallets: WalletTenure[]): string[] {
    return [
      ...this.#departmentWalletFindings(departmentWallets),
      ...this.#sharedKeyFindings(),
      ...this.#defaultAdminFindings(),
      ...this.#deployerAfterHandOverFindings(),
      ...this.#adminRoleChangeFindings(),
    ];
  }

  /**
   * A role holder never speaks for a department, at any time (a revoked operator key that later becomes a department
   * wallet is still a key the platform held).
   */
  #departmentWalletFindings(departmentWallets: WalletTenure[]): string[] {
    const findings: string[] = [];
    for (const p of this.#periods) {
      for (const tenure of departmentWallets.filter((t) => t.wallet === p.account)) {
        findings.push(
          `${p.account} holds or held ${roleOn(p)} (granted at ${where(p.grant)}) and is or was the wallet of department ${tenure.departmentCode} (from ${where(tenure.since)})`,
        );
      }
    }
    return findings;
  }

  /** Governance, administration and operation are three different keys, in the deployment file and on chain. */
  #sharedKeyFindings(): string[] {
    const findings: string[] = [];
    const { roles } = this.#deployment;
    const named = Object.entries(roles).filter(([key]) => key !== "keeper");
    named.forEach(([a, key], i) => {
      for (const [b, other] of named.slice(i + 1))
        if (key === other)
          findings.push(
            `the deployment file names the same key ${key} as ${a} and ${b}: they must be three different keys`,
          );
    });
    const powers: RoleName[] = ["DEFAULT_ADMIN_ROLE", "ADMIN_ROLE", "OPERATOR_ROLE"];
    const byAccount = new Map<string, Set<RoleName>>();
    for (const p of this.#periods) {
      const name = powers.find((r) => ROLES[r] === p.roleId);
      if (name) byAccount.set(p.account, (byAccount.get(p.account) ?? new Set()).add(name));
    }
    for (const [account, held] of byAccount) {
      if (held.size > 1)
        findings.push(
          `${account} holds or held ${[...held].join(" and ")}: governance, administration and the operator must be three different keys`,
        );
    }
    return findings;
  }

  /** DEFAULT_ADMIN_ROLE belongs to governance; the deployer holds it only while deploying and handing over. */
  #defaultAdminFindings(): string[] {
    const findings: string[] = [];
    const { roles } = this.#deployment;
    for (const p of this.#periods.filter((q) => q.roleId === ZeroHash)) {
      const deployer = this.deployerOf(p.contract);
      const constructorGrant =
        p === this.#periods.find((q) => q.contract === p.contract && q.roleId === ZeroHash) && p.account === deployer;
      if (p.account !== roles.governance && !constructorGrant) {
        findings.push(
          `${p.account} was granted DEFAULT_ADMIN_ROLE on ${p.contract} at ${where(p.grant)} by ${getAddress(p.grant.args.sender)}: only governance ${roles.governance} may hold it`,
        );
      } else if (p.account !== roles.governance && !p.revoke) {
        findings.push(
          `the deployer ${p.account} still holds DEFAULT_ADMIN_ROLE on ${p.contract}: it should have handed it to governance ${roles.governance} and renounced it`,
        );
      }
    }
    return findings;
  }

  /** Once governance holds DEFAULT_ADMIN_ROLE, the deployer grants and revokes nothing more (but renounces its own). */
  #deployerAfterHandOverFindings(): string[] {
    const findings: string[] = [];
    const { roles } = this.#deployment;
    for (const contract of ROLE_CONTRACTS) {
      const deployer = this.deployerOf(contract);
      if (!deployer || deployer === roles.governance) continue;
      const handedOver = this.#periods.find(
        (p) => p.contract === contract && p.roleId === ZeroHash && p.account === roles.governance,
      );
      if (!handedOver) continue;
      for (const p of this.#periods.filter((q) => q.contract === contract)) {
        for (const event of [p.grant, p.revoke]) {
          if (!event || !isBefore(handedOver.grant, event) || getAddress(event.args.sender) !== deployer) continue;
          // Renouncing its own DEFAULT_ADMIN_ROLE is the hand-over's last step.
          if (event === p.revoke && p.roleId === ZeroHash && p.account === deployer) continue;
          findings.push(
            `the deployer ${deployer} ${event.name === "RoleGranted" ? "granted" : "revoked"} ${roleOn(p)} ${event.name === "RoleGranted" ? "to" : "of"} ${p.account} at ${where(event)}, after governance had received DEFAULT_ADMIN_ROLE`,
          );
        }
      }
    }
    return findings;
  }

  /** No contract changes a role's admin role: one would let another role grant. */
  #adminRoleChangeFindings(): string[] {
    return this.#adminChanges.map(
      (e) =>
        `the admin role of ${roleName(String(e.args.role))} on ${this.#contractOf(e.address)} changed from ${roleName(String(e.args.previousAdminRole))} to ${roleName(String(e.args.newAdminRole))} at ${where(e)}`,
    );
  }
}

/** The roles scripts/deploy.ts grants on each contract, to the keys the deployment file names. */
const DEPLOYMENT_GRANTS = {
  LicenceToken: ["operator", "admin"],
  DocumentRegistry: ["operator"],
  ApprovalRegistry: ["operator", "admin", "keeper"],
} as const;
const ROLE_OF = { operator: "OPERATOR_ROLE", admin: "ADMIN_ROLE", keeper: "KEEPER_ROLE" } as const;

const roleOn = (p: Period) => `${roleName(p.roleId)} on ${p.contract}`;
