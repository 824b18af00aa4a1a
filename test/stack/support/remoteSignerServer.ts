/**
 * Test support, not product code: a small remote signer speaking the JSON-RPC signing interface that Web3Signer
 * (eth1 mode), EthSigner and Clef serve: `eth_accounts` lists its keys, `eth_signTransaction` signs a transaction
 * given as hex quantities and answers the raw signed transaction, `eth_signTypedData_v4` signs EIP-712 typed data. Any other method is a JSON-RPC error.
 *
 * `misbehave` makes it sign something else than asked (another key, another chain id, other calldata, a call for a contract creation), or answer
 * only after 2 s, to test that the API refuses it. Every call is recorded with the Authorization header it carried.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Wallet, getAddress, type TransactionRequest } from "ethers";

export type Misbehaviour = "none" | "otherKey" | "otherChainId" | "tamperedData" | "addressed" | "slow";

export interface SignerCall {
  method: string;
  authorization?: string;
  params: unknown[];
}

export interface RemoteSignerServer {
  url: string;
  /** The keys' addresses, in eth_accounts order. */
  addresses: string[];
  calls: SignerCall[];
  /** Raw transactions it signed, in order. */
  signed: string[];
  misbehave: Misbehaviour;
  stop(): Promise<void>;
}

export async function startRemoteSignerServer(
  options: { keys?: string[]; count?: number; authorization?: string } = {},
): Promise<RemoteSignerServer> {
  const wallets =
    options.keys?.map((k) => new Wallet(k)) ??
    Array.from({ length: options.count ?? 3 }, () => new Wallet(Wallet.createRandom().privateKey));
  const byAddress = new Map(wallets.map((w) => [w.address.toLowerCase(), w]));
  const calls: SignerCall[] = [];
  const signed: string[] = [];
  const state = { misbehave: "none" as Misbehaviour };

  const sign = async (params: unknown[]): Promise<string> => {
    const request = params[0] as Record<string, string | undefined>;
    const wallet = request?.from ? byAddress.get(request.from.toLowerCase()) : undefined;
    if (!wallet) throw Object.assign(new Error(`unknown account ${request?.from}`), { rpcCode: -32000 });
    const q = (v: string | undefined) => (v === undefined ? undefined : BigInt(v));
    const tx: TransactionRequest = {
      to: request.to,
      data: request.data ?? "0x",
      value: q(request.value) ?? 0n,
      nonce: Number(q(request.nonce)),
      gasLimit: q(request.gas),
      chainId: q(request.chainId),
      ...(request.maxFeePerGas !== undefined
        ? { type: 2, maxFeePerGas: q(request.maxFeePerGas), maxPriorityFeePerGas: q(request.maxPriorityFeePerGas) }
        : { type: 0, gasPrice: q(request.gasPrice) }),
    };
    let signer = wallet;
    if (state.misbehave === "otherKey")
      signer = wallets.find((w) => w !== wallet) ?? new Wallet(Wallet.createRandom().privateKey);
    if (state.misbehave === "otherChainId") tx.chainId = BigInt(tx.chainId ?? 0) + 1n;
    // A contract creation signed as a call to some address.
    if (state.misbehave === "addressed") tx.to ??= wallet.address;
    if (state.misbehave === "tamperedData")
      tx.data = `${String(tx.data).slice(0, -2)}${String(tx.data).endsWith("ff") ? "00" : "ff"}`;
    const raw = await signer.signTransaction(tx);
    signed.push(raw);
    return raw;
  };

  // A key proof (DepartmentKey typed data), as Web3Signer's eth_signTypedData_v4 takes it: [address, JSON payload].
  const signTypedData = async ([from, json]: unknown[]) => {
    const wallet = wallets.find((w) => w.address.toLowerCase() === String(from).toLowerCase());
    if (!wallet) throw Object.assign(new Error(`no key for ${String(from)}`), { rpcCode: -32000 });
    const { domain, types, message } = JSON.parse(String(json)) as {
      domain: Record<string, unknown>;
      types: Record<string, { name: string; type: string }[]>;
      message: Record<string, unknown>;
    };
    const { EIP712Domain: _domainType, ...rest } = types;
    return wallet.signTypedData(domain, rest, message);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      let call: { id?: unknown; method?: string; params?: unknown[] };
      try {
        call = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return answer(400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      }
      calls.push({ method: String(call.method), authorization: req.headers.authorization, params: call.params ?? [] });
      if (options.authorization && req.headers.authorization !== options.authorization)
        return answer(401, { message: "unauthorized" });
      if (state.misbehave === "slow") await new Promise((resolve) => setTimeout(resolve, 2_000));
      try {
        let result: unknown;
        if (call.method === "eth_accounts") result = wallets.map((w) => getAddress(w.address));
        else if (call.method === "eth_signTransaction") result = await sign(call.params ?? []);
        else if (call.method === "eth_signTypedData_v4") result = await signTypedData(call.params ?? []);
        else
          throw Object.assign(new Error(`the method ${call.method} does not exist/is not available`), {
            rpcCode: -32601,
          });
        answer(200, { jsonrpc: "2.0", id: call.id, result });
      } catch (error) {
        answer(200, {
          jsonrpc: "2.0",
          id: call.id,
          error: { code: (error as { rpcCode?: number }).rpcCode ?? -32603, message: (error as Error).message },
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    addresses: wallets.map((w) => getAddress(w.address)),
    calls,
    signed,
    get misbehave() {
      return state.misbehave;
    },
    set misbehave(value: Misbehaviour) {
      state.misbehave = value;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
