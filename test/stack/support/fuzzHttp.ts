/**
 * A raw HTTP client for the property-based fuzz tests (test/stack/propertyFuzz.test.ts): the path is sent exactly as
 * given (no normalisation of `..`, no re-encoding), headers and body bytes are the caller's, and the answer comes
 * back whatever its status or content type. `fetch` would normalise URLs and insist on well-formed bodies.
 */
import http from "node:http";

export interface RawRequest {
  method: string;
  /** Path and query exactly as they go on the request line (must already be percent-encoded where needed). */
  path: string;
  headers?: Record<string, string>;
  /** A Buffer or string is sent with Content-Length; an array of chunks is sent chunked (no Content-Length). */
  body?: Buffer | string | Buffer[];
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed body when it is JSON; undefined otherwise. */
  json?: unknown;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Sends `request` to `baseUrl`; retries once on a reused keep-alive socket the server had closed. */
export async function sendRaw(baseUrl: string, request: RawRequest, timeoutMs = 60_000): Promise<RawResponse> {
  try {
    return await sendOnce(baseUrl, request, timeoutMs, agent);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ECONNRESET") throw error;
    // A fresh connection: the server may legitimately close a connection after answering early (413, 415).
    return sendOnce(baseUrl, request, timeoutMs, undefined);
  }
}

function sendOnce(
  baseUrl: string,
  request: RawRequest,
  timeoutMs: number,
  via: http.Agent | undefined,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise<RawResponse>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(request.headers ?? {}) };
    const chunked = Array.isArray(request.body);
    if (request.body !== undefined && !chunked)
      headers["content-length"] = Buffer.byteLength(request.body as Buffer | string);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers,
        agent: via ?? false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          if (/json/i.test(String(res.headers["content-type"] ?? ""))) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (error) => {
      // The server answered and closed while we were still sending (e.g. 413 before reading the body): the answer
      // was already handled by the response callback; a write error after it is not a failure.
      reject(error);
    });
    if (chunked) {
      for (const chunk of request.body as Buffer[]) req.write(chunk);
      req.end();
    } else {
      req.end(request.body);
    }
  });
}

/** Percent-encodes the UTF-8 bytes of `value`, keeping the characters matched by `keep` (lone surrogates become U+FFFD). */
function percentEncode(value: string, keep: RegExp): string {
  let out = "";
  for (const char of Array.from(value)) {
    if (keep.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Percent-encodes everything but RFC 3986 unreserved characters (so `/`, `.`, `%` in a value stay inside the segment). */
export function encodeSegment(value: string): string {
  return percentEncode(value, /^[A-Za-z0-9\-_~.]$/);
}

/**
 * A path segment as an attacker might type it: `/`, `.` and `%` are kept raw (so `../x`, `%00` and a broken `%zz`
 * reach the server as is), everything the request line cannot carry is percent-encoded.
 */
export function rawSegment(value: string): string {
  return percentEncode(value, /^[A-Za-z0-9\-._~/%!$&'()*+,;=:@]$/);
}
