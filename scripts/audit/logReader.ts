/**
 * The contracts' events from the start block to the audited block, read in chunks (a chunk the node refuses is
 * split in two). Token events are selected by signature as well as by tokenId topic, because other events index
 * other ids at the same position.
 */
import { getAddress, zeroPadValue, toBeHex, type Interface, type JsonRpcProvider, type Log, type Result } from "ethers";
import { approvalRegistryAbi, documentRegistryAbi, licenceTokenAbi } from "./contractViews.ts";
import { isoTime } from "./auditRecord.ts";
import type { Deployment } from "./deploymentFile.ts";

export interface ChainEvent {
  name: string;
  args: Result;
  address: string;
  transactionHash: string;
  blockNumber: number;
  /** Position in its block: with the block number, orders events exactly as the chain applied them. */
  logIndex: number;
}

/** An event with its block's time (seconds since the epoch): delays are measured in block time. */
export interface TimedEvent extends ChainEvent {
  time: number;
}

/** Events that carry the licence's tokenId as their first indexed argument, per contract. */
const TOKEN_EVENTS: [Interface, string][] = [
  [licenceTokenAbi, "LicenceMinted LicenceStatusChanged LicenceIssued"],
  [documentRegistryAbi, "DocumentAnchored DocumentPhaseChanged"],
  [
    approvalRegistryAbi,
    "DecisionRecorded ReviewInvalidated ReviewStarted Resubmitted StageStarted StageCompleted StageReopened " +
      "StageRetried DecisionsReset StageEscalated EscalationResolved StageTimedOut",
  ],
];
/**
 * Events about the platform rather than one licence: who holds which role, how the contracts are wired, which
 * wallet speaks for which department. Role events have one signature on the three contracts (OZ AccessControl).
 * Who decides is replayed by the decision checks: each department's nonce (every decision on any licence consumes
 * one) and each workflow version's stages.
 */
const PLATFORM_EVENTS: [Interface, string][] = [
  [licenceTokenAbi, "RoleGranted RoleRevoked RoleAdminChanged ApprovalRegistrySet"],
  [documentRegistryAbi, "ReviewRegistrySet"],
  [
    approvalRegistryAbi,
    "DepartmentRegistered DepartmentWalletProposed DepartmentWalletCancelled DepartmentWalletRotated " +
      "DepartmentWalletConsented DepartmentActiveSet DecisionRecorded DecisionNonceIncreased WorkflowRegistered " +
      "WorkflowStageRegistered",
  ],
];

const topicsOf = (events: [Interface, string][]) =>
  events.flatMap(([iface, names]) => names.split(" ").map((name) => iface.getEvent(name)!.topicHash));

type ReaderOptions = { provider: JsonRpcProvider; deployment: Deployment; toBlock: number; chunkBlocks: number };

export class LogReader {
  readonly #o: ReaderOptions;

  constructor(options: ReaderOptions) {
    this.#o = options;
  }

  /** The licence events of one token (tokenId given) or of every token, in chain order. */
  async licenceEvents(tokenId?: number): Promise<ChainEvent[]> {
    const { contracts } = this.#o.deployment;
    const tokenTopic = tokenId === undefined ? null : zeroPadValue(toBeHex(tokenId), 32);
    const scoped = await this.#read(Object.values(contracts), [topicsOf(TOKEN_EVENTS), tokenTopic]);
    // ERC-721 Transfer indexes the token id third (from, to, tokenId): the owner's history.
    const transfers = await this.#read(
      [contracts.LicenceToken],
      [licenceTokenAbi.getEvent("Transfer")!.topicHash, null, null, tokenTopic],
    );
    return inChainOrder([...scoped, ...transfers]);
  }

  /** Every licence's issuance and change of status, and every status list's anchor, in chain order. */
  async statusListEvents(): Promise<ChainEvent[]> {
    const names = ["LicenceIssued", "LicenceStatusChanged", "StatusListAnchored"];
    const topics = names.map((name) => licenceTokenAbi.getEvent(name)!.topicHash);
    return inChainOrder(await this.#read([this.#o.deployment.contracts.LicenceToken], [topics]));
  }

  /** Role grants and revocations on the three contracts, their wiring, and every department wallet change. */
  async platformEvents(): Promise<ChainEvent[]> {
    const { contracts } = this.#o.deployment;
    return inChainOrder(
      await this.#read(
        [contracts.LicenceToken, contracts.DocumentRegistry, contracts.ApprovalRegistry],
        [topicsOf(PLATFORM_EVENTS)],
      ),
    );
  }

  /**
   * Every event `iface` knows that `address` emitted from `fromBlock` to the audited block, in chain order: a
   * contract outside the deployment (a department's wallet), read from its own creation.
   */
  async contractEvents(address: string, iface: Interface, fromBlock: number): Promise<ChainEvent[]> {
    return inChainOrder(await this.#read([address], [], fromBlock, [iface]));
  }

  async #read(
    addresses: string[],
    topics: (string | string[] | null)[],
    startBlock = this.#o.deployment.startBlock,
    interfaces = INTERFACES,
  ): Promise<ChainEvent[]> {
    const events: ChainEvent[] = [];
    for (let from = startBlock; from <= this.#o.toBlock; from += this.#o.chunkBlocks) {
      const to = Math.min(from + this.#o.chunkBlocks - 1, this.#o.toBlock);
      for (const log of await this.#range(addresses, topics, from, to)) {
        const event = decode(log, interfaces);
        if (event) events.push(event);
      }
    }
    return events;
  }

  /** One range; when the node refuses it (too many results, range too wide), its two halves. */
  async #range(addresses: string[], topics: (string | string[] | null)[], from: number, to: number): Promise<Log[]> {
    try {
      return await this.#o.provider.getLogs({ address: addresses, topics, fromBlock: from, toBlock: to });
    } catch (error) {
      if (from === to) throw error;
      const middle = Math.floor((from + to) / 2);
      return [
        ...(await this.#range(addresses, topics, from, middle)),
        ...(await this.#range(addresses, topics, middle + 1, to)),
      ];
    }
  }
}

const INTERFACES = [licenceTokenAbi, documentRegistryAbi, approvalRegistryAbi];

function decode(log: Log, interfaces: Interface[]): ChainEvent | undefined {
  // Event signatures are distinct across the three contracts, so the first ABI that knows the topic decodes it.
  for (const iface of interfaces) {
    const parsed = iface.parseLog({ topics: [...log.topics], data: log.data });
    if (parsed) {
      const { transactionHash, blockNumber, index: logIndex } = log;
      return {
        name: parsed.name,
        args: parsed.args,
        address: getAddress(log.address),
        transactionHash,
        blockNumber,
        logIndex,
      };
    }
  }
  // The deployment's contracts emit only what their ABIs declare; another contract's other events are not ours.
  if (interfaces === INTERFACES)
    throw new Error(`log ${log.transactionHash}#${log.index} matches no event of the ABIs`);
  return undefined;
}

export const inChainOrder = <E extends ChainEvent>(events: E[]) =>
  events.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);

export type ChainPosition = Pick<ChainEvent, "blockNumber" | "logIndex">;

export const isBefore = (a: ChainPosition, b: ChainPosition) =>
  a.blockNumber < b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex < b.logIndex);

/** Where an event happened, as findings name it: its block, the block's time and its transaction. */
export const where = (e: TimedEvent) => `block ${e.blockNumber} (${isoTime(e.time)}, tx ${e.transactionHash})`;
