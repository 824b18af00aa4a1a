/**
 * A remote signer over the standard Ethereum JSON-RPC signing interface, as Web3Signer (eth1 mode), EthSigner and
 * Clef serve it to Besu operators: `eth_accounts` lists its keys, `eth_signTransaction` signs a complete
 * transaction and returns its raw bytes. The keys stay in the signer (and the HSM or KMS behind it); this process
 * never sees one.
 *
 * The signer is trusted to sign, not to decide what: every raw transaction it returns is decoded and must be
 * exactly the one asked for (fields, chain id) and recover to `from`, or it is refused before anything is recorded.
 */
import { Transaction, TypedDataEncoder, getAddress, isAddress, toQuantity, verifyTypedData } from "ethers";
import { SignerError, SignerKeyTakenError, WalletChoiceError } from "./chainErrors.ts";
import type { SignableTransaction, TransactionSigner, TypedDataToSign } from "./transactionSigner.ts";
import type { WalletPurpose, WalletStore } from "./walletStore.ts";

export interface RemoteSignerOptions {
  /** http(s) URL of the signer's JSON-RPC endpoint. Credentials in the URL are sent as Basic auth. */
  url: string;
  /** Authorization header value, e.g. `Bearer TOKEN` or `Basic BASE64` (overrides credentials in the URL). */
  authorization?: string;
  /** Per call; the nonce sequencer holds the wallet's lock while the signer answers. */
  timeoutMs?: number;
  /** Records the signer's keys as wallets (nonce sequencing); without it `ensureKey` is unavailable. */
  wallets?: WalletStore;
}

/** The remote signer could not be reached, refused, or answered something other than what was asked. */
export class RemoteSignerError extends SignerError {}

export class RemoteSigner implements TransactionSigner {
  readonly mode = "remote" as const;
  readonly #endpoint: string;
  readonly #authorization?: string;
  readonly #timeoutMs: number;
  readonly #wallets?: WalletStore;
  #nextId = 1;

  constructor(options: RemoteSignerOptions) {
    const url = new URL(options.url);
    const fromUrl = url.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
      : undefined;
    url.username = "";
    url.password = "";
    this.#endpoint = url.toString();
    this.#authorization = options.authorization ?? fromUrl;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#wallets = options.wallets;
  }

  async addresses(): Promise<string[]> {
    const result = await this.#call("eth_accounts", []);
    if (!Array.isArray(result) || !result.every((a) => typeof a === "string" && isAddress(a))) {
      throw new RemoteSignerError("invalid", "The remote signer's eth_accounts answer is not a list of addresses");
    }
    return result.map((a) => getAddress(a));
  }

  async signTransaction(tx: SignableTransaction): Promise<string> {
    const request: Record<string, string> = {
      from: getAddress(tx.from),
      ...(tx.to === null ? {} : { to: getAddress(tx.to) }),
      gas: toQuantity(tx.gasLimit),
      nonce: toQuantity(tx.nonce),
      value: "0x0",
      data: tx.data,
      chainId: toQuantity(tx.chainId),
      ...(tx.type === 0
        ? { gasPrice: toQuantity(tx.gasPrice) }
        : { maxFeePerGas: toQuantity(tx.maxFeePerGas), maxPriorityFeePerGas: toQuantity(tx.maxPriorityFeePerGas) }),
    };
    const result = await this.#call("eth_signTransaction", [request]);
    // Web3Signer and EthSigner answer the raw hex; Clef and geth wrap it as { raw, tx }.
    const raw = typeof result === "string" ? result : (result as { raw?: unknown } | null)?.raw;
    if (typeof raw !== "string" || !/^0x[0-9a-fA-F]+$/.test(raw)) {
      throw new RemoteSignerError("invalid", "The remote signer's eth_signTransaction answer is not a raw transaction");
    }
    verifySigned(raw, tx);
    return raw.toLowerCase();
  }

  /** eth_signTypedData_v4 (Web3Signer, EthSigner and Clef serve it); the answer must recover to `address`. */
  async signTypedData(address: string, typed: TypedDataToSign): Promise<string> {
    const payload = TypedDataEncoder.getPayload(typed.domain, typed.types, typed.message);
    const result = await this.#call("eth_signTypedData_v4", [getAddress(address), JSON.stringify(payload)]);
    if (typeof result !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(result))
      throw new RemoteSignerError("invalid", "The remote signer's eth_signTypedData_v4 answer is not a signature");
    if (verifyTypedData(typed.domain, typed.types, typed.message, result) !== getAddress(address))
      throw new RemoteSignerError(
        "invalid",
        `The remote signer signed the typed data with another key than ${address}`,
      );
    return result.toLowerCase();
  }

  async ensureKey(purpose: WalletPurpose, label: string | null, options: { address?: string } = {}): Promise<string> {
    const wallets = this.#wallets;
    if (!wallets) throw new Error("this RemoteSigner has no wallet store to record keys in");
    const accounts = await this.addresses();
    if (options.address) {
      const address = accounts.find((a) => a.toLowerCase() === options.address!.toLowerCase());
      if (!address) {
        throw new WalletChoiceError(
          `walletAddress ${options.address} is not a key of the remote signer (eth_accounts): provision it in the signer first`,
        );
      }
      const recorded = await wallets.recordRemote(address, purpose, label);
      if (!recorded)
        throw new SignerKeyTakenError("WALLET_IN_USE", `${address} is already the wallet of something else here`, {
          walletAddress: address,
        });
      return recorded;
    }
    // The next key no wallet uses yet; a concurrent registration that took it first moves us to the one after.
    for (let attempt = 0; attempt < accounts.length; attempt++) {
      const used = await wallets.recordedAddresses();
      const next = accounts.find((a) => !used.has(a.toLowerCase()));
      if (!next) break;
      const recorded = await wallets.recordRemote(next, purpose, label);
      if (recorded) return recorded;
    }
    throw new SignerKeyTakenError(
      "NO_SIGNER_KEY_AVAILABLE",
      "Every key of the remote signer is already in use here: provision a new key in the signer, or give walletAddress",
      { signerKeys: accounts.length },
    );
  }

  async #call(method: string, params: unknown[]): Promise<unknown> {
    const id = this.#nextId++;
    let response: Response;
    try {
      response = await fetch(this.#endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          ...(this.#authorization ? { authorization: this.#authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === "TimeoutError";
      throw Object.assign(
        new RemoteSignerError(
          "unavailable",
          timedOut
            ? `The remote signer did not answer ${method} within ${this.#timeoutMs} ms; nothing was recorded`
            : `The remote signer is not reachable (${method}); nothing was recorded`,
        ),
        { cause: error },
      );
    }
    if (response.status === 401 || response.status === 403) {
      throw new RemoteSignerError(
        "refused",
        `The remote signer refused our credentials (HTTP ${response.status}); check REMOTE_SIGNER_AUTH`,
        { method, httpStatus: response.status },
      );
    }
    const body = (await response.json().catch(() => undefined)) as
      { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
    if (body?.error) {
      const code = typeof body.error.code === "number" ? body.error.code : undefined;
      const message = typeof body.error.message === "string" ? body.error.message.slice(0, 200) : "no message";
      throw new RemoteSignerError(
        "refused",
        `The remote signer refused ${method}: ${message}${code === undefined ? "" : ` (JSON-RPC error ${code})`}`,
        { method, signerCode: code, signerMessage: message },
      );
    }
    if (!response.ok) {
      throw new RemoteSignerError(
        response.status >= 500 ? "unavailable" : "refused",
        `The remote signer answered HTTP ${response.status} to ${method}`,
        { method, httpStatus: response.status },
      );
    }
    if (!body || body.id !== id || !("result" in body))
      throw new RemoteSignerError(
        "invalid",
        `The remote signer's answer to ${method} is not a JSON-RPC response to our call`,
        { method },
      );
    return body.result;
  }
}

/** Refuses a raw transaction that is not exactly `asked`, signed by `asked.from`. */
export function verifySigned(raw: string, asked: SignableTransaction): void {
  let tx: Transaction;
  try {
    tx = Transaction.from(raw);
  } catch (error) {
    throw new RemoteSignerError(
      "invalid",
      `The remote signer returned bytes that are not a transaction: ${(error as Error).message}`.slice(0, 300),
    );
  }
  if (!tx.signature || !tx.from)
    throw new RemoteSignerError("invalid", "The remote signer returned an unsigned transaction");
  const fees: [string, unknown, unknown][] =
    asked.type === 0
      ? [["gasPrice", tx.gasPrice, asked.gasPrice]]
      : [
          ["maxFeePerGas", tx.maxFeePerGas, asked.maxFeePerGas],
          ["maxPriorityFeePerGas", tx.maxPriorityFeePerGas, asked.maxPriorityFeePerGas],
        ];
  const checks: [string, unknown, unknown][] = [
    ["from", tx.from.toLowerCase(), asked.from.toLowerCase()],
    ["to", tx.to?.toLowerCase(), asked.to?.toLowerCase()],
    ["data", tx.data.toLowerCase(), asked.data.toLowerCase()],
    ["nonce", BigInt(tx.nonce), asked.nonce],
    ["gas", tx.gasLimit, asked.gasLimit],
    ["chainId", tx.chainId, BigInt(asked.chainId)],
    ["value", tx.value, 0n],
    ["type", tx.type, asked.type],
    ...fees,
  ];
  const differing = checks.filter(([, got, want]) => got !== want).map(([field]) => field);
  if (differing.length > 0) {
    throw new RemoteSignerError(
      "invalid",
      `The remote signer returned a transaction that differs from the one asked for (${differing.join(", ")}); it was not recorded or sent`,
      { differing },
    );
  }
}
