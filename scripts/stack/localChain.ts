/**
 * The embedded local chain: anvil (npm @foundry-rs/anvil-linux-amd64) whose state survives restarts. Not with its own
 * --dump-state, which rewrites the file in place (a kill during a save can leave it unreadable): anvil_dumpState is
 * written to a temp file, fsynced and renamed over the last snapshot, after new blocks and at a clean stop. After an
 * unclean kill the chain restarts from the last snapshot; the transaction outbox re-broadcasts what it lost.
 */
import { createRequire } from "node:module";
import { mkdir, open, rename, stat } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { spawnNode, waitUntil } from "./managedProcess.ts";

const require = createRequire(import.meta.url);

export interface LocalChainOptions {
  dataDir: string; // snapshots live in <dataDir>/chain
  port: number;
  chainId: number;
  snapshotIntervalMs?: number;
  log?: (line: string) => void;
}

export type LocalChain = Awaited<ReturnType<typeof startLocalChain>>;

export function anvilBinary(): string {
  const pkg = require.resolve("@foundry-rs/anvil-linux-amd64/package.json");
  return path.join(path.dirname(pkg), "bin", "anvil");
}

export async function startLocalChain(options: LocalChainOptions) {
  const dir = path.join(options.dataDir, "chain");
  await mkdir(dir, { recursive: true });
  const stateFile = path.join(dir, "state.json");
  const hasState = ((await stat(stateFile).catch(() => undefined))?.size ?? 0) > 0;
  const rpcUrl = `http://127.0.0.1:${options.port}`;
  const log = options.log ?? (() => {});
  // The binary itself (not the npm wrapper, which leaves an orphan on SIGKILL), its pid recorded at once.
  const anvil = await spawnNode({
    name: "chain",
    command: anvilBinary(),
    // The state file does not store the chain id: pass it every time. London: the EVM version our contracts target
    // on Besu, so gas and behaviour match.
    args: ["--host", "127.0.0.1", "--port", String(options.port), "--chain-id", String(options.chainId)]
      .concat(["--hardfork", "london", "--silent"])
      .concat(hasState ? ["--load-state", stateFile] : []),
    dataDir: options.dataDir,
  });
  await waitUntil(anvil, () => rpc(rpcUrl, "eth_chainId", []).then(() => true), 15_000, `anvil (port ${options.port})`);
  log(`local chain ready at ${rpcUrl} (chain ${options.chainId}${hasState ? ", state restored" : ", fresh"})`);
  const snapshots = await startSnapshots(rpcUrl, stateFile, hasState, options.snapshotIntervalMs ?? 1_000, log);
  return {
    rpcUrl,
    pid: anvil.pid,
    /** Saves a snapshot now (atomic). */
    snapshot: snapshots.save,
    /**
     * Clean stop: snapshot, then SIGTERM; SIGKILL when `graceMs` runs out first. True when the final snapshot was
     * saved (a kill during it leaves the previous one, since saves are atomic).
     */
    async stop(graceMs = 30_000): Promise<boolean> {
      snapshots.stopInterval();
      if (!anvil.isRunning()) return false;
      const timer = setTimeout(() => anvil.child.kill("SIGKILL"), graceMs);
      const failed = await snapshots.save().catch((error: Error) => error);
      if (failed) log(`final chain snapshot failed: ${failed.message}`);
      await anvil.stop(graceMs);
      clearTimeout(timer);
      return !failed;
    },
    /** Unclean stop (tests): SIGKILL without a snapshot. */
    async kill() {
      snapshots.stopInterval();
      await anvil.kill();
    },
  };
}

/**
 * Saves the chain's state on an interval, only when a block was added since the last save (a save of 30 MB of
 * state every 250 ms kept half a core busy on an idle chain). Balances set without a block (anvil_setBalance) are
 * saved with the next block, and always at a clean stop.
 */
async function startSnapshots(
  rpcUrl: string,
  stateFile: string,
  hasState: boolean,
  intervalMs: number,
  log: (line: string) => void,
) {
  let saving: Promise<void> | undefined;
  // The head the last save holds.
  let savedHead = hasState ? await rpc<string>(rpcUrl, "eth_blockNumber", []) : undefined;
  const save = async () => {
    // One save at a time; a request during a save waits for it and saves again.
    while (saving) await saving;
    saving = (async () => {
      const head = await rpc<string>(rpcUrl, "eth_blockNumber", []);
      await saveSnapshot(rpcUrl, stateFile);
      savedHead = head;
    })().finally(() => (saving = undefined));
    return saving;
  };
  const timer = setInterval(() => {
    if (saving) return;
    rpc<string>(rpcUrl, "eth_blockNumber", [])
      .then((head) => (head !== savedHead ? save() : undefined))
      .catch((error) => log(`chain snapshot failed: ${error.message}`));
  }, intervalMs);
  timer.unref();
  return { save, stopInterval: () => clearInterval(timer) };
}

/** anvil_dumpState returns gzipped JSON as hex; --load-state reads the JSON. Write it atomically. */
async function saveSnapshot(rpcUrl: string, stateFile: string): Promise<void> {
  const hex: string = await rpc(rpcUrl, "anvil_dumpState", []);
  const json = gunzipSync(Buffer.from(hex.slice(2), "hex"));
  const temp = `${stateFile}.${process.pid}.tmp`;
  const file = await open(temp, "w");
  await file
    .writeFile(json)
    .then(() => file.sync())
    .finally(() => file.close());
  await rename(temp, stateFile);
  // fsync the directory so the rename itself survives a power loss.
  const dir = await open(path.dirname(stateFile), "r");
  await dir.sync().finally(() => dir.close());
}

export async function rpc<T = any>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
