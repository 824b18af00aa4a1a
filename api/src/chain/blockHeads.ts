/**
 * New blocks as the node announces them: `eth_subscribe("newHeads")` over the node's WebSocket endpoint (anvil
 * serves it on its HTTP port; Besu on its `--rpc-ws-port`), so waiting for a receipt costs nothing until a block
 * comes, instead of a poll every few milliseconds. Reconnects after a drop; while it is not connected, `connected`
 * is false and the caller polls instead.
 */
import type { Logger } from "pino";

type Listener = (blockNumber: number) => void;

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;

export class BlockHeads {
  readonly #url: string;
  readonly #logger: Logger;
  readonly #listeners = new Set<Listener>();
  #socket?: WebSocket;
  #subscribed = false;
  #stopped = false;
  #retryMs = RECONNECT_MIN_MS;
  #retryTimer?: NodeJS.Timeout;

  constructor(url: string, logger: Logger) {
    this.#url = url;
    this.#logger = logger;
  }

  /** True while the subscription is live: every new block reaches the listeners. */
  get connected(): boolean {
    return this.#subscribed;
  }

  start(): void {
    this.#stopped = false;
    this.#connect();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    this.#subscribed = false;
    this.#socket?.close();
    this.#socket = undefined;
  }

  onHead(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #connect(): void {
    if (this.#stopped) return;
    const socket = new WebSocket(this.#url);
    this.#socket = socket;
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    });
    socket.addEventListener("message", (event) => this.#message(String(event.data)));
    socket.addEventListener("close", () => this.#dropped(socket));
    socket.addEventListener("error", () => socket.close());
  }

  #message(text: string): void {
    let message: { id?: number; result?: unknown; error?: unknown; params?: { result?: { number?: string } } };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.id === 1) {
      this.#subscribed = typeof message.result === "string";
      if (this.#subscribed) this.#retryMs = RECONNECT_MIN_MS;
      else this.#logger.warn({ error: message.error }, "the node refused the newHeads subscription; polling instead");
      return;
    }
    const number = message.params?.result?.number;
    if (typeof number !== "string") return;
    const blockNumber = Number.parseInt(number, 16);
    for (const listener of this.#listeners) listener(blockNumber);
  }

  #dropped(socket: WebSocket): void {
    if (socket !== this.#socket) return;
    this.#subscribed = false;
    this.#socket = undefined;
    if (this.#stopped) return;
    this.#retryTimer = setTimeout(() => this.#connect(), this.#retryMs);
    this.#retryTimer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MAX_MS);
  }
}
