/**
 * Which wallet spoke for which department, with which custody, at any point of the chain, replayed from
 * DepartmentRegistered, DepartmentWalletProposed, DepartmentWalletCancelled and DepartmentWalletRotated.
 *
 * A wallet change is public and delayed: each rotation must activate the department's pending proposal (same
 * wallet, same custody), not cancelled since, proposed at least `walletDelay` seconds of block time earlier, with
 * the `effectiveAt` the contract announced. Anything else is a finding, and the period the early wallet then
 * spoke for the department is marked, so that every decision made in it is a finding too (the "rotate, decide,
 * rotate back" forgery leaves exactly that trace). A cancellation must come from the department's wallet at the
 * time or an ADMIN_ROLE holder.
 *
 * Decisions are checked against the wallet of their own point of the chain: the current wallet would wrongly
 * fail every decision made before a rotation, and wrongly pass one made by the new wallet before it took effect.
 */
import { decodeBytes32String, getAddress } from "ethers";
import {
  CUSTODY_NAMES,
  isoTime,
  type CustodyName,
  type DepartmentAudit,
  type WalletChangeAudit,
} from "./auditRecord.ts";
import { isBefore, type TimedEvent } from "./logReader.ts";
import type { RoleHistory, WalletTenure } from "./roleHistory.ts";

export interface WalletPeriod {
  wallet: string;
  custody: CustodyName;
  /** The event that made this wallet (and custody) the department's: its registration or a rotation. */
  since: TimedEvent;
  /** For a rotation: the proposal it activated (null: none was pending, a finding). */
  proposal: TimedEvent | null;
  /** A rotation that did not wait `walletDelay` after a pending proposal: every decision in the period is a finding. */
  early: boolean;
}

interface Department {
  code: string;
  periods: WalletPeriod[];
  changes: WalletChangeAudit[];
  pending: TimedEvent | null;
}

export class DepartmentWallets {
  readonly #departments = new Map<number, Department>();
  readonly #findings: string[] = [];

  /**
   * `events`: the platform events in chain order (department events are picked out). `roles` answers whether a
   * canceller held ADMIN_ROLE on the approval registry at the time.
   */
  constructor(events: TimedEvent[], walletDelay: number, roles?: Pick<RoleHistory, "holdsAt">) {
    for (const event of events) {
      if (!event.name.startsWith("DepartmentWallet") && event.name !== "DepartmentRegistered") continue;
      const departmentId = Number(event.args.departmentId);
      const at = `block ${event.blockNumber} (${isoTime(event.time)}, tx ${event.transactionHash})`;
      if (event.name === "DepartmentRegistered") {
        this.#registered(event, departmentId, at);
        continue;
      }
      const department = this.#departments.get(departmentId);
      if (!department) {
        this.#findings.push(`${event.name} for department ${departmentId}, which was never registered, at ${at}`);
        continue;
      }
      if (event.name === "DepartmentWalletProposed") this.#proposed(department, event, at, walletDelay);
      else if (event.name === "DepartmentWalletCancelled") this.#cancelled(department, event, at, roles);
      else if (event.name === "DepartmentWalletRotated") this.#rotated(department, event, at, walletDelay);
    }
  }

  #registered(event: TimedEvent, departmentId: number, at: string): void {
    if (this.#departments.has(departmentId)) {
      this.#findings.push(`department ${departmentId} registered a second time at ${at}`);
      return;
    }
    const custody = custodyName(event.args.custody);
    this.#departments.set(departmentId, {
      code: codeText(event.args.code),
      periods: [{ wallet: getAddress(event.args.wallet), custody, since: event, proposal: null, early: false }],
      changes: [walletChange(event, "REGISTERED", { custody })],
      pending: null,
    });
  }

  /** A proposal announces effectiveAt = its block time + walletDelay, and replaces a pending one. */
  #proposed(department: Department, event: TimedEvent, at: string, walletDelay: number): void {
    const effectiveAt = Number(event.args.effectiveAt);
    const custody = custodyName(event.args.custody);
    if (effectiveAt !== event.time + walletDelay) {
      this.#findings.push(
        `the wallet change of ${department.code} proposed at ${at} announces effectiveAt ${isoTime(effectiveAt)}, but its block time + walletDelay (${walletDelay} s) is ${isoTime(event.time + walletDelay)}`,
      );
    }
    // A new proposal replaces a pending one (the contract keeps one pending change per department).
    if (department.pending) department.changes.at(-1)!.replacedBy = event.transactionHash;
    department.pending = event;
    department.changes.push(walletChange(event, "PROPOSED", { custody, effectiveAt: isoTime(effectiveAt) }));
  }

  /** A cancellation names the pending proposal and comes from the department's wallet or an ADMIN_ROLE holder. */
  #cancelled(department: Department, event: TimedEvent, at: string, roles?: Pick<RoleHistory, "holdsAt">): void {
    const name = department.code;
    const current = department.periods.at(-1)!;
    const by = getAddress(event.args.by);
    const wallet = getAddress(event.args.wallet);
    if (!department.pending || getAddress(department.pending.args.wallet) !== wallet) {
      this.#findings.push(
        `the wallet change of ${name} to ${wallet} was cancelled at ${at}, but ${department.pending ? `the pending proposal was ${getAddress(department.pending.args.wallet)}` : "none was pending"}`,
      );
    }
    if (by !== current.wallet && !roles?.holdsAt("ApprovalRegistry", "ADMIN_ROLE", by, event)) {
      this.#findings.push(
        `the wallet change of ${name} was cancelled at ${at} by ${by}, neither the department's wallet ${current.wallet} nor an ADMIN_ROLE holder`,
      );
    }
    department.pending = null;
    department.changes.push(walletChange(event, "CANCELLED", { by }));
  }

  /** A rotation activates the pending proposal (same wallet and custody) once its delay ran out; else it is early. */
  #rotated(department: Department, event: TimedEvent, at: string, walletDelay: number): void {
    const name = department.code;
    const current = department.periods.at(-1)!;
    const wallet = getAddress(event.args.wallet);
    const custody = custodyName(event.args.custody);
    const previous = getAddress(event.args.previousWallet);
    const proposal = department.pending;
    if (previous !== current.wallet) {
      this.#findings.push(
        `${name}'s wallet rotated at ${at} says it replaced ${previous}, but the replayed wallet was ${current.wallet}`,
      );
    }
    const problems = rotationProblems({ name, wallet, custody, at, event, proposal, walletDelay });
    this.#findings.push(...problems);
    const early = problems.length > 0;
    department.periods.push({ wallet, custody, since: event, proposal, early });
    department.pending = null;
    department.changes.push(
      walletChange(event, "ROTATED", {
        custody,
        previousWallet: previous,
        proposedAt: proposal ? isoTime(proposal.time) : null,
        waitedSeconds: proposal ? event.time - proposal.time : null,
        delayRespected: !early,
      }),
    );
  }

  /** Findings of the replay itself (rotations without their delay, unauthorised cancellations, …). */
  get findings(): string[] {
    return this.#findings;
  }

  codeOf(departmentId: number): string | undefined {
    return this.#departments.get(departmentId)?.code;
  }

  /** The department's wallet period just before `event` was applied (undefined: not registered yet). */
  periodAt(departmentId: number, event: { blockNumber: number; logIndex: number }): WalletPeriod | undefined {
    let found: WalletPeriod | undefined;
    for (const period of this.#departments.get(departmentId)?.periods ?? []) {
      if (!isBefore(period.since, event)) break;
      found = period;
    }
    return found;
  }

  walletAt(departmentId: number, event: { blockNumber: number; logIndex: number }): string | undefined {
    return this.periodAt(departmentId, event)?.wallet;
  }

  /** The wallet and custody after every rotation: must equal `departmentRecord(id)` at the audited block. */
  latest(departmentId: number): { wallet: string; custody: CustodyName; pending: string | null } | undefined {
    const department = this.#departments.get(departmentId);
    if (!department) return undefined;
    const period = department.periods.at(-1)!;
    return {
      wallet: period.wallet,
      custody: period.custody,
      pending: department.pending ? getAddress(department.pending.args.wallet) : null,
    };
  }

  ids(): number[] {
    return [...this.#departments.keys()].sort((a, b) => a - b);
  }

  /** Every period any address was a department wallet: a role holder must never be one. */
  tenures(): WalletTenure[] {
    return [...this.#departments.values()].flatMap((d) =>
      d.periods.map((p, i) => ({
        wallet: p.wallet,
        departmentCode: d.code,
        since: p.since,
        until: d.periods[i + 1]?.since ?? null,
      })),
    );
  }

  /** Each department's wallet history, for the report. */
  audit(): DepartmentAudit[] {
    return this.ids().map((departmentId) => {
      const d = this.#departments.get(departmentId)!;
      const period = d.periods.at(-1)!;
      return { departmentId, code: d.code, wallet: period.wallet, custody: period.custody, changes: d.changes };
    });
  }
}

export function custodyName(value: unknown): CustodyName {
  return CUSTODY_NAMES[Number(value)] ?? (`UNKNOWN_${value}` as CustodyName);
}

/** A department code as registered (bytes32 text); the raw word if it is not text. */
export function codeText(word: string): string {
  try {
    return decodeBytes32String(word);
  } catch {
    return word;
  }
}

/** One line of a department's wallet history, from the event that made it. */
function walletChange(
  event: TimedEvent,
  kind: WalletChangeAudit["kind"],
  extra: Partial<WalletChangeAudit>,
): WalletChangeAudit {
  return {
    kind,
    wallet: getAddress(event.args.wallet),
    transactionHash: event.transactionHash,
    blockNumber: event.blockNumber,
    timestamp: isoTime(event.time),
    ...extra,
  };
}

/** Why a rotation came early: no pending proposal, another wallet or custody than proposed, or the delay not waited. */
function rotationProblems(rotation: {
  name: string;
  wallet: string;
  custody: CustodyName;
  at: string;
  event: TimedEvent;
  proposal: TimedEvent | null;
  walletDelay: number;
}): string[] {
  const { name, wallet, custody, at, event, proposal, walletDelay } = rotation;
  if (!proposal) {
    return [
      `${name}'s wallet became ${wallet} (${custody}) at ${at} with no pending proposal: a wallet change must be proposed and wait ${walletDelay} s in public`,
    ];
  }
  const problems: string[] = [];
  const waitedSeconds = event.time - proposal.time;
  const proposed = getAddress(proposal.args.wallet);
  if (proposed !== wallet || custodyName(proposal.args.custody) !== custody) {
    problems.push(
      `${name}'s wallet became ${wallet} (${custody}) at ${at}, but the pending proposal was ${proposed} (${custodyName(proposal.args.custody)})`,
    );
  }
  if (waitedSeconds < walletDelay || event.time < Number(proposal.args.effectiveAt)) {
    problems.push(
      `${name}'s wallet became ${wallet} at ${at}, ${waitedSeconds} s after its proposal (block ${proposal.blockNumber}, tx ${proposal.transactionHash}): the wallet delay is ${walletDelay} s`,
    );
  }
  return problems;
}
