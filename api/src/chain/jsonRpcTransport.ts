/**
 * JSON-RPC over HTTP for the API's provider, on Node's own `http` with a keep-alive agent.
 *
 * ethers' default transport (FetchRequest) decodes every response body byte by byte in JavaScript
 * (`toUtf8String`) and copies it through several byte arrays: with blocks and receipts on every write that was
 * about a third of the API's ethers time, measured with `scripts/bench/profileWrites.ts`. Here the body is read as
 * Buffers, decoded once by V8 and parsed by `JSON.parse`; everything above the transport (batching, errors,
 * formatting) stays ethers'.
 */
import http from "node:http";
import https from "node:https";
import { JsonRpcProvider, type JsonRpcApiProviderOptions, type JsonRpcPayload, type JsonRpcResult } from "ethers";

/** Time for one HTTP exchange with the node before it counts as unreachable. */
const REQUEST_TIMEOUT_MS = 30_000;

export class JsonRpcTransportError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "JsonRpcTransportError";
    // SERVER_ERROR / TIMEOUT: the codes ethers' own transport gives, which chainErrors.isConnectionError knows.
    this.code = code;
  }
}

/** POSTs a JSON-RPC payload (one call or a batch) and returns the parsed answer. */
export function jsonRpcPost(url: URL, agent: http.Agent, body: string): Promise<unknown> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            reject(new JsonRpcTransportError("SERVER_ERROR", `JSON-RPC node answered HTTP ${status}`));
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new JsonRpcTransportError("SERVER_ERROR", "JSON-RPC node answered a body that is not JSON"));
          }
        });
      },
    );
    request.on("timeout", () =>
      request.destroy(
        new JsonRpcTransportError("TIMEOUT", `no answer from the JSON-RPC node in ${REQUEST_TIMEOUT_MS} ms`),
      ),
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** ethers' JsonRpcProvider with the transport above. */
export class NodeHttpJsonRpcProvider extends JsonRpcProvider {
  readonly #url: URL;
  readonly #agent: http.Agent;

  constructor(url: string, chainId: number, options: JsonRpcApiProviderOptions) {
    super(url, chainId, options);
    this.#url = new URL(url);
    const Agent = this.#url.protocol === "https:" ? https.Agent : http.Agent;
    this.#agent = new Agent({ keepAlive: true, maxSockets: 64 });
  }

  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    const answer = await jsonRpcPost(this.#url, this.#agent, JSON.stringify(payload));
    return (Array.isArray(answer) ? answer : [answer]) as JsonRpcResult[];
  }

  override destroy(): void {
    this.#agent.destroy();
    super.destroy();
  }
}
