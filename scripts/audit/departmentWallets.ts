/**
 * Which wallet spoke for which department, with which custody, at any point of the chain, replayed from the
 * department events. Decisions are checked against the wallet of their own point of the chain: the current one would
 * wrongly fail every decision made before a rotation, and wrongly pass one made by the new wallet before it took
 * effect. A rotation that skipped its delay or its outgoing department-held wallet's consent marks the new wallet's
 * period, so that every decision in it is a finding (the "rotate, decide, rotate back" forgery leaves that trace).
 * Who made each change is checked from its transaction (`callerFindings`): the contract refuses anything else, but
 * the auditor does not take the code's word for it.
 */
import { TypedDataEncoder, decodeBytes32String, getAddress, type Result } from "ethers";
import { DECISION_DOMAIN_NAME, DECISION_DOMAIN_VERSION, DEPARTMENT_KEY_TYPES } from "../../abis/index.ts";
import {
  CUSTODY_NAMES,
  isoTime,
  type CustodyName,
  type DepartmentAudit,
  type WalletChangeAudit,
} from "./auditRecord.ts";
import { approvalRegistryAbi, stageRuleOf } from "./contractViews.ts";
import { isBefore, where, type ChainPosition, type TimedEvent } from "./logReader.ts";
import type { PasskeyAccounts } from "./passkeyAudit.ts";
import type { RoleHistory, WalletTenure } from "./roleHistory.ts";
import type { ContractCall, Eip712Domain, TransactionLookups } from "./transactionLookups.ts";

export interface WalletPeriod {
  wallet: string;
  custody: CustodyName;
  /** The event that made this wallet (and custody) the department's: its registration or a rotation. */
  since: TimedEvent;
  /** For a rotation: the proposal it activated (null: none was pending, a finding). */
  proposal: TimedEvent | null;
  /** A rotation that did not wait `walletDelay` after a pending proposal: every decision in the period is a finding. */
  early: boolean;
  /** For a rotation: the wallet and custody it replaced. */
  previous?: { wallet: string; custody: CustodyName };
  /** For a rotation: the outgoing wallet consented to it (DepartmentWalletConsented after the proposal). */
  consented?: boolean;
  /** A DEPARTMENT_HELD wallet replaced by another without its consent: every decision in the period is a finding. */
  unconsented: boolean;
}

/** A workflow stage as registered (WorkflowStageRegistered). */
export type WorkflowStage = ReturnType<typeof stageRuleOf>;

/** A value a department held from an event on (active flag, nonce). */
type Since<T> = { at: ChainPosition | null; value: T };

interface Department {
  code: string;
  periods: WalletPeriod[];
  changes: WalletChangeAudit[];
  pending: TimedEvent | null;
  /** DepartmentWalletConsented for the pending proposal. */
  consent: TimedEvent | null;
  active: Since<boolean>[];
  nonces: Since<number>[];
}

/** The call that made an event, and what its caller must be (undefined: it is), given the call. */
interface Act {
  fn: string;
  matches: (args: Result) => boolean;
  check: (from: string, args: Result) => Promise<string | undefined> | string | undefined;
}

/** What the replay does with a department event, given the department it names (already registered). */
type Step = (department: Department, event: TimedEvent, at: string) => void;

export class DepartmentWallets {
  readonly #departments = new Map<number, Department>();
  readonly #findings: string[] = [];
  readonly #stages = new Map<number, WorkflowStage[]>();
  readonly #events: TimedEvent[];
  readonly #walletDelay: number;
  readonly #roles?: Pick<RoleHistory, "holdsAt">;
  readonly #steps: Record<string, Step> = {
    DepartmentWalletProposed: (d, e, at) => this.#proposed(d, e, at),
    DepartmentWalletConsented: (d, e, at) => this.#consented(d, e, at),
    DepartmentWalletCancelled: (d, e, at) => this.#cancelled(d, e, at),
    DepartmentWalletRotated: (d, e, at) => this.#rotated(d, e, at),
    DepartmentActiveSet: (d, e) => d.active.push({ at: e, value: Boolean(e.args.active) }),
    // Every decision of the department, on any licence, consumes its nonce (decide and decideBySig alike).
    DecisionRecorded: (d, e) => d.nonces.push({ at: e, value: d.nonces.at(-1)!.value + 1 }),
    DecisionNonceIncreased: (d, e, at) => this.#nonceIncreased(d, e, at),
  };

  /** `events`: the platform events in chain order (department events are picked out). */
  constructor(events: TimedEvent[], walletDelay: number, roles?: Pick<RoleHistory, "holdsAt">) {
    [this.#events, this.#walletDelay, this.#roles] = [events, walletDelay, roles];
    for (const event of events) {
      if (event.name === "WorkflowStageRegistered") {
        const stages = this.#stages.get(Number(event.args.workflowId)) ?? [];
        stages[Number(event.args.stageIndex)] = stageRuleOf(event.args.stage);
        this.#stages.set(Number(event.args.workflowId), stages);
      }
      const step = this.#steps[event.name];
      if (!step && event.name !== "DepartmentRegistered") continue;
      const departmentId = Number(event.args.departmentId);
      const at = where(event);
      const department = this.#departments.get(departmentId);
      if (event.name === "DepartmentRegistered") this.#registered(event, departmentId, at);
      else if (!department)
        this.#findings.push(`${event.name} for department ${departmentId}, which was never registered, at ${at}`);
      else step(department, event, at);
    }
  }

  #nonceIncreased(department: Department, event: TimedEvent, at: string): void {
    const current = department.nonces.at(-1)!.value;
    const [previous, nonce] = [Number(event.args.previousNonce), Number(event.args.nonce)];
    if (previous !== current)
      this.#findings.push(
        `${department.code}'s decision nonce was increased at ${at} from ${previous}, but its decisions had brought it to ${current}`,
      );
    if (nonce <= previous)
      this.#findings.push(
        `${department.code}'s decision nonce went from ${previous} to ${nonce} at ${at}: it only moves forward`,
      );
    department.nonces.push({ at: event, value: nonce });
  }

  /** The pending proposal's wallet, if it is not `wallet`: what a consent or cancellation names must be pending. */
  #notPending(department: Department, wallet: string): string | undefined {
    const pending = department.pending && getAddress(department.pending.args.wallet);
    if (pending === wallet) return undefined;
    return pending ? `the pending proposal was ${pending}` : "none was pending";
  }

  /** A consent names the pending proposal's wallet; the caller (the outgoing wallet) is checked from its transaction. */
  #consented(department: Department, event: TimedEvent, at: string): void {
    const wallet = getAddress(event.args.wallet);
    const notPending = this.#notPending(department, wallet);
    if (notPending)
      this.#findings.push(`${department.code}'s wallet consented at ${at} to a change to ${wallet}, but ${notPending}`);
    else department.consent = event;
  }

  #registered(event: TimedEvent, departmentId: number, at: string): void {
    if (this.#departments.has(departmentId)) {
      this.#findings.push(`department ${departmentId} registered a second time at ${at}`);
      return;
    }
    const [wallet, custody] = [getAddress(event.args.wallet), custodyName(event.args.custody)];
    this.#departments.set(departmentId, {
      code: codeText(event.args.code),
      periods: [{ wallet, custody, since: event, proposal: null, early: false, unconsented: false }],
      changes: [walletChange(event, "REGISTERED", { custody })],
      pending: null,
      consent: null,
      active: [{ at: event, value: true }],
      nonces: [{ at: null, value: 0 }],
    });
  }

  /** A proposal announces effectiveAt = its block time + walletDelay, and replaces a pending one. */
  #proposed(department: Department, event: TimedEvent, at: string): void {
    const effectiveAt = Number(event.args.effectiveAt);
    const walletDelay = this.#walletDelay;
    if (effectiveAt !== event.time + walletDelay) {
      this.#findings.push(
        `the wallet change of ${department.code} proposed at ${at} announces effectiveAt ${isoTime(effectiveAt)}, but its block time + walletDelay (${walletDelay} s) is ${isoTime(event.time + walletDelay)}`,
      );
    }
    // A new proposal replaces a pending one (the contract keeps one pending change per department).
    if (department.pending) department.changes.at(-1)!.replacedBy = event.transactionHash;
    // A consent was to the proposal it named: a new proposal needs its own.
    [department.pending, department.consent] = [event, null];
    const custody = custodyName(event.args.custody);
    department.changes.push(walletChange(event, "PROPOSED", { custody, effectiveAt: isoTime(effectiveAt) }));
  }

  /** A cancellation names the pending proposal and comes from the department's wallet or an ADMIN_ROLE holder. */
  #cancelled(department: Department, event: TimedEvent, at: string): void {
    const [name, current] = [department.code, department.periods.at(-1)!];
    const [by, wallet] = [getAddress(event.args.by), getAddress(event.args.wallet)];
    const notPending = this.#notPending(department, wallet);
    if (notPending)
      this.#findings.push(`the wallet change of ${name} to ${wallet} was cancelled at ${at}, but ${notPending}`);
    if (by !== current.wallet && !this.#roles?.holdsAt("ApprovalRegistry", "ADMIN_ROLE", by, event)) {
      this.#findings.push(
        `the wallet change of ${name} was cancelled at ${at} by ${by}, neither the department's wallet ${current.wallet} nor an ADMIN_ROLE holder`,
      );
    }
    [department.pending, department.consent] = [null, null];
    department.changes.push(walletChange(event, "CANCELLED", { by }));
  }

  /** A rotation activates the pending proposal (same wallet and custody) once its delay ran out; else it is early. */
  #rotated(department: Department, event: TimedEvent, at: string): void {
    const [name, current, proposal] = [department.code, department.periods.at(-1)!, department.pending];
    const [wallet, custody] = [getAddress(event.args.wallet), custodyName(event.args.custody)];
    const previous = getAddress(event.args.previousWallet);
    if (previous !== current.wallet) {
      this.#findings.push(
        `${name}'s wallet rotated at ${at} says it replaced ${previous}, but the replayed wallet was ${current.wallet}`,
      );
    }
    const consented = department.consent !== null;
    // The contract lets only a department that holds its key waive the delay by consenting.
    const waived = consented && current.custody === "DEPARTMENT_HELD";
    const problems = this.#rotationProblems(department, event, at, waived);
    this.#findings.push(...problems);
    const early = problems.length > 0;
    const unconsented = current.custody === "DEPARTMENT_HELD" && wallet !== current.wallet && !consented;
    const replaced = { wallet: current.wallet, custody: current.custody };
    department.periods.push({
      wallet,
      custody,
      since: event,
      proposal,
      early,
      previous: replaced,
      consented,
      unconsented,
    });
    [department.pending, department.consent] = [null, null];
    department.changes.push(
      walletChange(event, "ROTATED", {
        custody,
        previousWallet: previous,
        proposedAt: proposal ? isoTime(proposal.time) : null,
        waitedSeconds: proposal ? event.time - proposal.time : null,
        delayRespected: !early,
        consented,
      }),
    );
  }

  /**
   * Why a rotation came early: no pending proposal, another wallet or custody than proposed, or the delay not waited
   * (unless `waived`: the outgoing department-held wallet consented, so the contract lets it take effect at once).
   */
  #rotationProblems({ code: name, pending: proposal }: Department, event: TimedEvent, at: string, waived: boolean) {
    const [wallet, custody, walletDelay] = [
      getAddress(event.args.wallet),
      custodyName(event.args.custody),
      this.#walletDelay,
    ];
    if (!proposal)
      return [
        `${name}'s wallet became ${wallet} (${custody}) at ${at} with no pending proposal: a wallet change must be proposed and wait ${walletDelay} s in public`,
      ];
    const problems: string[] = [];
    const waitedSeconds = event.time - proposal.time;
    const proposed = getAddress(proposal.args.wallet);
    if (proposed !== wallet || custodyName(proposal.args.custody) !== custody)
      problems.push(
        `${name}'s wallet became ${wallet} (${custody}) at ${at}, but the pending proposal was ${proposed} (${custodyName(proposal.args.custody)})`,
      );
    if (!waived && (waitedSeconds < walletDelay || event.time < Number(proposal.args.effectiveAt)))
      problems.push(
        `${name}'s wallet became ${wallet} at ${at}, ${waitedSeconds} s after its proposal (block ${proposal.blockNumber}, tx ${proposal.transactionHash}): the wallet delay is ${walletDelay} s`,
      );
    return problems;
  }

  /** Findings of the replay itself (rotations without their delay, unauthorised cancellations, …). */
  get findings(): string[] {
    return this.#findings;
  }

  codeOf(departmentId: number): string | undefined {
    return this.#departments.get(departmentId)?.code;
  }

  /** The department's wallet period just before `event` was applied (undefined: not registered yet). */
  periodAt(departmentId: number, event: ChainPosition): WalletPeriod | undefined {
    return valueAt(
      (this.#departments.get(departmentId)?.periods ?? []).map((p) => ({ at: p.since, value: p })),
      event,
    );
  }

  walletAt(departmentId: number, event: ChainPosition): string | undefined {
    return this.periodAt(departmentId, event)?.wallet;
  }

  /** Whether the department could decide just before `event` (registered and not deactivated since). */
  activeAt(departmentId: number, event: ChainPosition): boolean {
    return valueAt(this.#departments.get(departmentId)?.active ?? [], event) ?? false;
  }

  /** The department's next decision nonce just before `event`, replayed from its decisions and nonce increases. */
  nonceAt(departmentId: number, event: ChainPosition): number | undefined {
    return valueAt(this.#departments.get(departmentId)?.nonces ?? [], event);
  }

  /** A workflow version's stages as registered (undefined: no WorkflowStageRegistered for it). */
  stagesOf(workflowId: number): WorkflowStage[] | undefined {
    return this.#stages.get(workflowId);
  }

  /** Who made each change of who decides, from its transaction; a change whose call cannot be found is a finding. */
  async callerFindings(
    lookups: Pick<TransactionLookups, "callsTo" | "eip712Domain" | "isSignedBy">,
    roles: Pick<RoleHistory, "holdsAt">,
    passkeys?: Pick<PasskeyAccounts, "account" | "expected">,
  ): Promise<string[]> {
    const governance = (what: string, event: TimedEvent) => (from: string) =>
      roles.holdsAt("ApprovalRegistry", "DEFAULT_ADMIN_ROLE", from, event)
        ? undefined
        : `${what} was made by ${from}, which did not hold DEFAULT_ADMIN_ROLE (governance) on the approval registry then`;
    const keyProof = async (event: TimedEvent, args: Result) => {
      const domain = await lookups.eip712Domain(event.address, event.blockNumber);
      if (!domain) return "the registry's EIP-712 domain (eip712Domain) could not be read";
      const { code, wallet: named, custody } = args;
      const digest = TypedDataEncoder.hash(typedDomain(domain), DEPARTMENT_KEY_TYPES, { code, wallet: named, custody });
      const wallet = getAddress(args.wallet);
      const onChain = await lookups.isSignedBy(wallet, digest, args.keyProof, event.blockNumber);
      const problems = onChain ? [] : [`its key proof is not ${wallet}'s signature of DepartmentKey`];
      // A passkey account's key proof is its reviewers' consent to it: each assertion is verified here too.
      const account = passkeys ? await passkeys.account(wallet) : null;
      if (account) {
        const checked = account.checkSignature(digest, args.keyProof, event, {
          what: "its key proof",
          onChain,
          expected: passkeys!.expected,
        });
        const { transactionHash, blockNumber } = event;
        account.keyProofs.push({
          departmentCode: codeText(code),
          transactionHash,
          blockNumber,
          passkeys: checked.passkeys,
        });
        problems.push(...checked.findings);
      }
      return problems.length ? problems.join("; ") : undefined;
    };
    /** The call that must have made `event`, and what its caller must be (a finding, or undefined when it is). */
    const callOf = (event: TimedEvent): Act | undefined => {
      const a = event.args;
      // Workflow and role events carry no department id (and ethers' Result throws on an unknown name).
      const departmentId =
        event.name.startsWith("Department") || event.name === "DecisionNonceIncreased" ? Number(a.departmentId) : 0;
      const code = this.codeOf(departmentId) ?? `#${departmentId}`;
      const at = `block ${event.blockNumber} (tx ${event.transactionHash})`;
      const sameCode = (args: Result) => codeText(args.code) === code;
      /** A change of the department's wallet's own: sent by its wallet of the time. */
      const byWallet = (fn: string, what: string, matches: Act["matches"]): Act => {
        const wallet = this.walletAt(departmentId, event);
        const check = (from: string) =>
          from === wallet
            ? undefined
            : `${what} was sent by ${from}, not by the department's wallet ${wallet ?? "(none)"}`;
        return { fn, matches, check };
      };
      /** A wallet named by governance with the wallet's key proof, and the custody the event records. */
      const keyed = (fn: string, what: string): Act => ({
        fn,
        matches: (args) => sameCode(args) && getAddress(args.wallet) === getAddress(a.wallet),
        check: async (from, args) => {
          const problems = [governance(what, event)(from)];
          if (Number(args.custody) !== Number(a.custody))
            problems.push(
              `${what}: the call asked for custody ${custodyName(args.custody)}, the event says ${custodyName(a.custody)}`,
            );
          const proof = await keyProof(event, args);
          if (proof) problems.push(`${what}: ${proof}`);
          return problems.filter(Boolean).join("; ") || undefined;
        },
      });
      switch (event.name) {
        case "DepartmentRegistered":
          return keyed(
            "registerDepartment",
            `the registration of ${code} with wallet ${getAddress(a.wallet)} at ${at}`,
          );
        case "DepartmentWalletProposed":
          return keyed(
            "proposeDepartmentWallet",
            `the wallet change of ${code} to ${getAddress(a.wallet)} proposed at ${at}`,
          );
        case "WorkflowRegistered":
          return {
            fn: "registerWorkflow",
            matches: (args) => String(args.workflowType).toLowerCase() === String(a.workflowType).toLowerCase(),
            check: governance(`workflow version ${a.workflowId} registered at ${at}`, event),
          };
        case "DepartmentWalletConsented":
          const consent = `the consent to ${code}'s wallet change to ${getAddress(a.wallet)} at ${at}`;
          return byWallet("consentDepartmentWallet", consent, sameCode);
        case "DecisionNonceIncreased":
          const increase = `the increase of ${code}'s decision nonce to ${a.nonce} at ${at}`;
          return byWallet("increaseDecisionNonce", increase, (args) => BigInt(args.nonce) === BigInt(a.nonce));
        case "DepartmentActiveSet": {
          const what = `${code} was ${a.active ? "activated" : "deactivated"} at ${at}`;
          return {
            fn: "setDepartmentActive",
            matches: (args) => sameCode(args) && Boolean(args.active) === Boolean(a.active),
            check: (from) =>
              roles.holdsAt("ApprovalRegistry", "ADMIN_ROLE", from, event)
                ? undefined
                : `${what} by ${from}, which did not hold ADMIN_ROLE on the approval registry then`,
          };
        }
      }
    };
    const results = await Promise.all(
      this.#events.map(async (event) => {
        const act = callOf(event);
        if (!act) return undefined;
        const found = await registryCall(lookups, event, act.fn, act.matches);
        return typeof found === "string" ? found : act.check(found.from, found.args);
      }),
    );
    return results.filter((r): r is string => Boolean(r));
  }

  /** The wallet and custody after every rotation: must equal `departmentRecord(id)` at the audited block. */
  latest(departmentId: number): { wallet: string; custody: CustodyName; pending: string | null } | undefined {
    const department = this.#departments.get(departmentId);
    if (!department) return undefined;
    const { wallet, custody } = department.periods.at(-1)!;
    return { wallet, custody, pending: department.pending ? getAddress(department.pending.args.wallet) : null };
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
      const { code, periods, changes } = this.#departments.get(departmentId)!;
      return { departmentId, code, wallet: periods.at(-1)!.wallet, custody: periods.at(-1)!.custody, changes };
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
function walletChange(event: TimedEvent, kind: WalletChangeAudit["kind"], extra: Partial<WalletChangeAudit>) {
  const { transactionHash, blockNumber } = event;
  const wallet = getAddress(event.args.wallet);
  return { kind, wallet, transactionHash, blockNumber, timestamp: isoTime(event.time), ...extra } as WalletChangeAudit;
}

/** The value of a history just before `event`. */
function valueAt<T>(history: Since<T>[], event: ChainPosition): T | undefined {
  let found: T | undefined;
  for (const entry of history) {
    if (entry.at && !isBefore(entry.at, event)) break;
    found = entry.value;
  }
  return found;
}

/** The typed-data domain of the registry's eip712Domain() answer, salt included (ethers refuses other keys). */
export const typedDomain = ({ fields, ...domain }: Eip712Domain) => (void fields, domain);

/** Why the registry's domain is not the one decisions must be signed in (the deployment's chain and registry). */
export function domainProblem(
  domain: { name: string; version: string; chainId: bigint; verifyingContract: string; fields: number },
  chainId: number,
  registry: string,
): string | undefined {
  const problems: string[] = [];
  if (domain.name !== DECISION_DOMAIN_NAME || domain.version !== DECISION_DOMAIN_VERSION)
    problems.push(`name and version ${domain.name} ${domain.version}`);
  if (domain.chainId !== BigInt(chainId)) problems.push(`chain id ${domain.chainId}`);
  if (getAddress(domain.verifyingContract) !== getAddress(registry))
    problems.push(`verifying contract ${domain.verifyingContract}`);
  if (domain.fields !== 0x1f) problems.push(`fields 0x${domain.fields.toString(16)}`);
  return problems.length ? `the registry's eip712Domain() says ${problems.join(", ")}` : undefined;
}

/**
 * The call to the approval registry (the event's emitter) in the event's transaction that made it: a `fn` call
 * whose arguments `matches`, with its caller. A string when it cannot be found (the finding to report).
 */
export async function registryCall(
  lookups: Pick<TransactionLookups, "callsTo">,
  event: { address: string; transactionHash: string; blockNumber: number; name: string },
  fn: string | string[],
  matches: (args: Result, name: string) => boolean,
): Promise<{ from: string; args: Result; name: string } | string> {
  const names = Array.isArray(fn) ? fn : [fn];
  const { calls, how } = await lookups.callsTo(event.transactionHash, event.address);
  const what = `${event.name} at block ${event.blockNumber} (tx ${event.transactionHash})`;
  if (!calls)
    return `cannot verify ${what}: the node has no call trace and the transaction is neither a call to the approval registry nor a Safe's call to it`;
  for (const call of calls) {
    const parsed = parseRegistryCall(call);
    if (parsed && names.includes(parsed.name) && matches(parsed.args, parsed.name))
      return { from: call.from, args: parsed.args, name: parsed.name };
  }
  return `cannot verify ${what}: no ${names.join(" or ")} call that made it is in the transaction (${how === "trace" ? "call trace" : "transaction input"})`;
}

function parseRegistryCall(call: ContractCall) {
  try {
    return approvalRegistryAbi.parseTransaction({ data: call.input }) ?? undefined;
  } catch {
    return undefined;
  }
}
