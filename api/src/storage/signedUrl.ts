/**
 * Signed download URLs of the local backend, served by the API itself:
 *
 *   ${PUBLIC_BASE_URL}/api/v1/files/<token>?expires=<unix seconds>[&name=<download name>]&signature=<hex>
 *
 * - token: the storage key encoded as unpadded base64url (one path segment, no "/", "." or "%"); the decoded key
 *   must re-encode to the same token and be a valid key (keys.ts), so no token can name a path outside the store;
 * - expires: the instant (Unix seconds, UTC) after which the URL is refused;
 * - name: the download file name offered in Content-Disposition (optional, already sanitised when signed);
 * - signature: lowercase hex HMAC-SHA256, keyed with FILE_URL_SECRET, of
 *   "licence-files/v1\n" + key + "\n" + expires + "\n" + (name ?? "").
 * The key cannot contain "\n", expires is digits and name has no control characters, so the message is unambiguous.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { isValidKey } from "./keys.ts";

/** Presigned URLs (S3 SigV4) are limited to 7 days; the local backend uses the same limit. */
export const MAX_URL_LIFETIME_SECONDS = 7 * 24 * 3600;
export const FILES_ROUTE_PREFIX = "/api/v1/files";

export function encodeKeyToken(key: string): string {
  return Buffer.from(key, "utf8").toString("base64url");
}

/** The key a token names, or undefined when the token is not the canonical encoding of a valid key. */
export function decodeKeyToken(token: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,700}$/.test(token)) return undefined;
  const key = Buffer.from(token, "base64url").toString("utf8");
  if (encodeKeyToken(key) !== token || !isValidKey(key)) return undefined;
  return key;
}

function signature(secret: Buffer, key: string, expires: number, name: string | undefined): string {
  return createHmac("sha256", secret)
    .update(`licence-files/v1\n${key}\n${expires}\n${name ?? ""}`, "utf8")
    .digest("hex");
}

export function checkLifetime(expiresInSeconds: number): void {
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_URL_LIFETIME_SECONDS) {
    throw new RangeError(
      `expiresInSeconds must be an integer from 1 to ${MAX_URL_LIFETIME_SECONDS} (got ${expiresInSeconds})`,
    );
  }
}

export function signLocalUrl(options: {
  secret: Buffer;
  publicBaseUrl: string;
  key: string;
  expires: number;
  downloadName?: string;
}): string {
  const { secret, publicBaseUrl, key, expires, downloadName } = options;
  const query = new URLSearchParams({ expires: String(expires) });
  if (downloadName) query.set("name", downloadName);
  query.set("signature", signature(secret, key, expires, downloadName));
  return `${publicBaseUrl.replace(/\/$/, "")}${FILES_ROUTE_PREFIX}/${encodeKeyToken(key)}?${query.toString()}`;
}

export type UrlCheck = { ok: true; key: string; downloadName?: string } | { ok: false; reason: "INVALID" | "EXPIRED" };

/** Checks a request's token and query: the signature (compared in constant time) first, then the expiry. */
export function verifyLocalUrl(
  secret: Buffer,
  token: string,
  query: { expires?: string; signature?: string; name?: string },
  nowSeconds = Math.floor(Date.now() / 1000),
): UrlCheck {
  const key = decodeKeyToken(token);
  const { expires, signature: given } = query;
  const name = query.name === "" ? undefined : query.name;
  if (key === undefined || !expires || !/^\d{1,12}$/.test(expires) || !given || !/^[0-9a-f]{64}$/.test(given)) {
    return { ok: false, reason: "INVALID" };
  }
  if (name !== undefined && sanitizeDownloadName(name) !== name) return { ok: false, reason: "INVALID" };
  const expected = Buffer.from(signature(secret, key, Number(expires), name), "hex");
  if (!timingSafeEqual(expected, Buffer.from(given, "hex"))) return { ok: false, reason: "INVALID" };
  if (nowSeconds > Number(expires)) return { ok: false, reason: "EXPIRED" };
  return { ok: true, key, downloadName: name };
}

/**
 * A download name safe to put in a URL and a header: control characters removed, "/", "\\" and quotes replaced by
 * "_", trimmed, at most 150 characters. Empty → undefined.
 */
export function sanitizeDownloadName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const clean = Array.from(
    name
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "")
      .replace(/[/\\"]/g, "_")
      .trim(),
  )
    .slice(0, 150)
    .join("")
    .trim();
  return clean === "" ? undefined : clean;
}

/** `attachment`, with the file name as an ASCII fallback and as RFC 8187 UTF-8 when given. */
export function contentDisposition(downloadName: string | undefined): string {
  const name = sanitizeDownloadName(downloadName);
  if (!name) return "attachment";
  const ascii = name.replace(/[^\x20-\x7e]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
