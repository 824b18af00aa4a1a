/**
 * Signed department requests (our answer to the spec's "how apiSecret is used: not shown").
 *
 * Headers: `X-Timestamp` (unix seconds, integer), `X-Signature` (hex HMAC-SHA256, 64 characters) and, optionally,
 * `X-Nonce` (1-64 characters of A-Z a-z 0-9 . _ ~ -, random per request). The HMAC key is the apiSecret string (its
 * UTF-8 bytes, prefix included). The signed string is five lines joined by "\n" (no trailing newline):
 *
 *     METHOD            upper case, e.g. POST
 *     request target    path and query exactly as sent, from the API root: /api/v1/departments/FIRE?x=1
 *     timestamp         the X-Timestamp value
 *     nonce             the X-Nonce value, or empty when none is sent
 *     body hash         lower-case hex SHA-256 of the body (see below)
 *
 * The nonce makes two identical requests within the same second distinct: without one, the second would carry the
 * same signature and be refused as a replay.
 *
 * Body hash: a request without a body (no Content-Length or 0, no Transfer-Encoding) hashes the empty string.
 * A JSON body hashes its canonical JSON: the parsed value serialised with object keys sorted (JavaScript's default
 * string order, i.e. UTF-16 code units) at every level, no whitespace, strings and numbers as JSON.stringify writes
 * them. Sending the canonical JSON as the body itself makes this simply the SHA-256 of the bytes sent. When the
 * body parser keeps the raw bytes (koa-body `includeUnparsed`), the SHA-256 of the exact bytes sent is accepted
 * too. Departments' signed requests carry JSON or no body: any other body (form, multipart, text) is refused.
 *
 * A signature is accepted within 5 minutes either side of the server's clock, once: it is then remembered (per
 * department) until its timestamp is 10 minutes old, and any reuse is refused. A retry must be signed again (new
 * nonce or timestamp).
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Context } from "koa";
import { canonicalJson } from "../encoding/canonicalJson.ts";
import { sha256Hex } from "./secrets.ts";

export const SIGNATURE_WINDOW_SECONDS = 300;
export const SIGNATURE_RETENTION_SECONDS = 600;

const EMPTY_BODY_HASH = sha256Hex("");

export const NONCE_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;

export function signingString(
  method: string,
  target: string,
  timestamp: string | number,
  nonce: string,
  bodyHash: string,
): string {
  return `${method.toUpperCase()}\n${target}\n${timestamp}\n${nonce}\n${bodyHash}`;
}

export function hmacHex(apiSecret: string, message: string): string {
  return createHmac("sha256", apiSecret).update(message, "utf8").digest("hex");
}

/**
 * What a client does: the headers for a request. `body` is the value sent as JSON (it should be sent as
 * `canonicalJson(body)`), or undefined for a request without a body. A random nonce unless one is given ("" for none).
 */
export function signatureHeaders(
  apiSecret: string,
  method: string,
  target: string,
  body?: unknown,
  options: { timestamp?: number; nonce?: string } = {},
): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const nonce = options.nonce ?? randomBytes(12).toString("base64url");
  const bodyHash = body === undefined ? EMPTY_BODY_HASH : sha256Hex(canonicalJson(body));
  return {
    "x-timestamp": String(timestamp),
    ...(nonce ? { "x-nonce": nonce } : {}),
    "x-signature": hmacHex(apiSecret, signingString(method, target, timestamp, nonce, bodyHash)),
  };
}

/** The body hashes this request may have been signed with, or undefined when its body cannot be signed. */
export function bodyHashesOf(ctx: Context): string[] | undefined {
  const length = ctx.get("content-length");
  const hasBody = Boolean(ctx.get("transfer-encoding")) || (length !== "" && Number(length) > 0);
  if (!hasBody) return [EMPTY_BODY_HASH];
  const request = ctx.request as { body?: unknown; rawBody?: unknown };
  const hashes: string[] = [];
  if (typeof request.rawBody === "string") hashes.push(sha256Hex(Buffer.from(request.rawBody, "utf8")));
  // koa-body parses JSON on POST, PUT and PATCH; a JSON body on another method is left unread.
  if (
    ctx.is("application/json", "application/*+json") &&
    request.body !== undefined &&
    ["POST", "PUT", "PATCH"].includes(ctx.method)
  ) {
    hashes.push(sha256Hex(canonicalJson(request.body)));
  }
  return hashes.length > 0 ? hashes : undefined;
}
