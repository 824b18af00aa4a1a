/**
 * The chain as an administrator sees it: network identity, consensus, the nodes visible from our RPC endpoint and
 * the latest block. Every JSON-RPC probe runs in parallel with its own short timeout, and only two are required:
 * without the chain id and the latest block the chain is unavailable (ChainUnavailableError). The rest are
 * best effort: Besu answers admin_* and qbft_* / ibft_* / clique_* when those APIs are enabled (docs/besu.md);
 * a local anvil answers none of them and is reported as one node.
 */
import { computeAddress, getAddress } from "ethers";
import { isoFromUnixSeconds } from "../encoding/unixTime.ts";
import { ChainUnavailableError } from "./chainErrors.ts";

/** `provider.send` of ethers' JsonRpcProvider, or a fake in tests. */
export type RpcSend = (method: string, params: unknown[]) => Promise<unknown>;

export interface ChainNode {
  nodeId: string;
  /** The node's account (from its public key), the one a BFT or Clique validator set lists; null when unknown. */
  address: string | null;
  /** rpc: the node the API talks to; peer: a peer connected to it; validator: in the validator set but neither. */
  source: "rpc" | "peer" | "validator";
  isValidator: boolean;
  isHealthy: boolean;
  /** null: not known from our node. */
  peers: number | null;
  latestBlock: number | null;
  clientVersion: string | null;
}

export interface NetworkStatus {
  network: { chainId: number; networkId: number; consensus: string; validators: string[] };
  nodes: ChainNode[];
  latestBlock: { number: number; hash: string; timestamp: string };
}

export const PROBE_TIMEOUT_MS = 2_000;
/** A connected peer whose head is known to be further behind ours than this is reported unhealthy. */
export const MAX_PEER_LAG_BLOCKS = 10;
/** Permissioned networks have a handful of nodes; bounds the per-peer probes. */
const MAX_PEERS = 50;

interface RpcBlock {
  number: string;
  hash: string;
  timestamp: string;
}
interface NodeInfo {
  id?: string;
  name?: string;
}
interface Peer {
  id?: string;
  name?: string;
  protocols?: { eth?: { head?: string } };
}

type Attempt<T> = { ok: true; value: T } | { ok: false; error: unknown };
const TIMED_OUT = Symbol("timed out");

/** One probe: its answer, or the reason it has none (error, or no answer in time; the late answer is ignored). */
async function attempt<T>(send: RpcSend, method: string, params: unknown[], timeoutMs: number): Promise<Attempt<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs)));
  try {
    const value = await Promise.race([send(method, params), timeout]);
    if (value === TIMED_OUT)
      return {
        ok: false,
        error: Object.assign(new Error(`${method}: no answer within ${timeoutMs} ms`), { code: "TIMEOUT" }),
      };
    return { ok: true, value: value as T };
  } catch (error) {
    return { ok: false, error };
  } finally {
    clearTimeout(timer);
  }
}

export async function networkStatus(
  send: RpcSend,
  options: { expectedChainId: number; timeoutMs?: number },
): Promise<NetworkStatus> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const optional = optionalProbe(send, timeoutMs);
  const probes = await probeNode(send, timeoutMs, optional);
  const { chainId, latestBlock } = requiredAnswers(probes);
  const { consensus, validators } = consensusOf(probes);
  const rpcNode = rpcNodeOf(probes, {
    chainId,
    expectedChainId: options.expectedChainId,
    latestBlock: latestBlock.number,
    consensus,
    validators,
  });
  const peers = await peerNodes(probes.peerList, latestBlock.number, validators, optional);
  return {
    network: { chainId, networkId: networkIdOf(probes.netVersion) ?? chainId, consensus, validators },
    nodes: [rpcNode, ...peers, ...absentValidators(validators, [rpcNode, ...peers])],
    latestBlock,
  };
}

type OptionalProbe = <T>(method: string, params?: unknown[]) => Promise<T | undefined>;

/** A best-effort probe: its answer, or undefined when it failed, timed out or answered null. */
function optionalProbe(send: RpcSend, timeoutMs: number): OptionalProbe {
  return async <T>(method: string, params: unknown[] = []) => {
    const result = await attempt<T>(send, method, params, timeoutMs);
    return result.ok && result.value !== null ? result.value : undefined;
  };
}

/** Every probe of our RPC node, in parallel. */
async function probeNode(send: RpcSend, timeoutMs: number, optional: OptionalProbe) {
  const probes = {
    chainId: attempt<string>(send, "eth_chainId", [], timeoutMs),
    head: attempt<RpcBlock | null>(send, "eth_getBlockByNumber", ["latest", false], timeoutMs),
    netVersion: optional<string>("net_version"),
    peerCount: optional<string>("net_peerCount"),
    clientVersion: optional<string>("web3_clientVersion"),
    syncing: optional<unknown>("eth_syncing"),
    nodeInfo: optional<NodeInfo>("admin_nodeInfo"),
    peerList: optional<Peer[]>("admin_peers"),
    qbft: optional<string[]>("qbft_getValidatorsByBlockNumber", ["latest"]),
    ibft: optional<string[]>("ibft_getValidatorsByBlockNumber", ["latest"]),
    clique: optional<string[]>("clique_getSigners", ["latest"]),
    automine: optional<boolean>("anvil_getAutomine"),
  };
  const answers = await Promise.all(Object.values(probes));
  return Object.fromEntries(Object.keys(probes).map((name, i) => [name, answers[i]])) as {
    [K in keyof typeof probes]: Awaited<(typeof probes)[K]>;
  };
}

type Probes = Awaited<ReturnType<typeof probeNode>>;

/** Without the chain id and the latest block the chain is unavailable. */
function requiredAnswers({ chainId, head }: Probes): { chainId: number; latestBlock: NetworkStatus["latestBlock"] } {
  if (!chainId.ok) throw new ChainUnavailableError(chainId.error);
  if (!head.ok) throw new ChainUnavailableError(head.error);
  if (!head.value) throw new ChainUnavailableError(new Error("the node has no latest block"));
  return {
    chainId: Number(BigInt(chainId.value)),
    latestBlock: {
      number: Number(BigInt(head.value.number)),
      hash: head.value.hash,
      timestamp: isoFromUnixSeconds(BigInt(head.value.timestamp)),
    },
  };
}

/** The node the API talks to. */
function rpcNodeOf(
  { nodeInfo, clientVersion, syncing, peerCount, peerList }: Probes,
  known: { chainId: number; expectedChainId: number; latestBlock: number; consensus: string; validators: string[] },
): ChainNode {
  const singleLocalNode = known.consensus.startsWith("none");
  const address = addressOf(nodeInfo?.id);
  return {
    nodeId: nodeInfo?.id ?? clientVersion ?? "rpc",
    address,
    source: "rpc",
    // A single local node (anvil) seals every block itself.
    isValidator: singleLocalNode || (address !== null && known.validators.includes(address)),
    // It answered in time; wrong chain or still syncing is not healthy.
    isHealthy: known.chainId === known.expectedChainId && (syncing === undefined || syncing === false),
    peers: quantity(peerCount) ?? (Array.isArray(peerList) ? peerList.length : singleLocalNode ? 0 : null),
    latestBlock: known.latestBlock,
    clientVersion: clientVersion ?? nodeInfo?.name ?? null,
  };
}

/** The peers connected to our node (at most MAX_PEERS), each with its head block when our node knows it. */
async function peerNodes(
  peerList: Peer[] | undefined,
  latestBlock: number,
  validators: string[],
  optional: OptionalProbe,
): Promise<ChainNode[]> {
  return Promise.all(
    (Array.isArray(peerList) ? peerList.slice(0, MAX_PEERS) : []).map(async (peer): Promise<ChainNode> => {
      const address = addressOf(peer.id);
      const peerHead = peer.protocols?.eth?.head;
      const block = peerHead ? await optional<RpcBlock>("eth_getBlockByHash", [peerHead, false]) : undefined;
      const number = block ? Number(BigInt(block.number)) : null;
      return {
        nodeId: peer.id ?? "unknown",
        address,
        source: "peer",
        isValidator: address !== null && validators.includes(address),
        // Connected to our node; unhealthy only when its head is known to lag.
        isHealthy: number === null || latestBlock - number <= MAX_PEER_LAG_BLOCKS,
        peers: null,
        latestBlock: number,
        clientVersion: peer.name ?? null,
      };
    }),
  );
}

/** Validators neither we nor our peers are: not connected, so not healthy as far as we can tell. */
function absentValidators(validators: string[], connected: ChainNode[]): ChainNode[] {
  const seen = new Set(connected.map((node) => node.address).filter((a): a is string => a !== null));
  return validators
    .filter((address) => !seen.has(address))
    .map((address) => ({
      nodeId: address,
      address,
      source: "validator",
      isValidator: true,
      isHealthy: false,
      peers: null,
      latestBlock: null,
      clientVersion: null,
    }));
}

/** The first validator API that answers names the consensus; otherwise a local development node, or unknown. */
function consensusOf(probes: {
  qbft?: string[];
  ibft?: string[];
  clique?: string[];
  clientVersion?: string;
  automine?: boolean;
}): { consensus: string; validators: string[] } {
  const known: [string, string[] | undefined][] = [
    ["QBFT", probes.qbft],
    ["IBFT 2.0", probes.ibft],
    ["Clique", probes.clique],
  ];
  for (const [name, list] of known) {
    if (Array.isArray(list))
      return { consensus: name, validators: list.map(checksum).filter((a): a is string => a !== null) };
  }
  const client = probes.clientVersion?.toLowerCase() ?? "";
  if (probes.automine !== undefined || client.startsWith("anvil")) {
    return {
      consensus:
        probes.automine === false ? "none (single local node, interval mining)" : "none (single local node, automine)",
      validators: [],
    };
  }
  if (client.startsWith("hardhat")) return { consensus: "none (single local node)", validators: [] };
  return { consensus: "unknown", validators: [] };
}

/** A node id is its secp256k1 public key (64 bytes hex): the account is derived from it. */
function addressOf(nodeId: string | undefined): string | null {
  if (!nodeId) return null;
  const hex = nodeId.replace(/^0x/, "");
  if (!/^[0-9a-fA-F]{128}$/.test(hex)) return null;
  try {
    return computeAddress(`0x04${hex}`);
  } catch {
    return null;
  }
}

function checksum(address: unknown): string | null {
  try {
    return typeof address === "string" ? getAddress(address) : null;
  } catch {
    return null;
  }
}

function quantity(value: string | undefined): number | null {
  try {
    return value === undefined ? null : Number(BigInt(value));
  } catch {
    return null;
  }
}

function networkIdOf(value: string | undefined): number | null {
  const n = value === undefined ? NaN : Number(value);
  return Number.isSafeInteger(n) ? n : null;
}
