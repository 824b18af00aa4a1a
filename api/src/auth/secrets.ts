/**
 * Secrets we hand out (client secrets, authorization codes) and how they are stored: only hashes, compared in
 * constant time.
 *
 * - Generated secrets carry 256 random bits, so a plain SHA-256 is enough: nobody can brute-force a 2^256 space,
 *   and a fast hash keeps the token endpoint cheap. Stored as `sha256:<hex>`.
 * - The bootstrap admin secret comes from the environment (ADMIN_CLIENT_SECRET) and may have been chosen by a
 *   person, so it is stored with scrypt (salted, memory-hard): `scrypt:<N>:<r>:<p>:<salt b64url>:<hash b64url>`.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";

const scrypt = (secret: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(secret, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

const SCRYPT = { N: 16384, r: 8, p: 1 };

/** A URL-safe random string of `bytes` random bytes (default 256 bits). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** Lower-case hex SHA-256 (of a string's UTF-8 bytes). */
export const sha256Hex = (value: string | Buffer): string => createHash("sha256").update(value).digest("hex");

export async function hashSecret(secret: string, kind: "random" | "chosen"): Promise<string> {
  if (kind === "random") return `sha256:${sha256Hex(secret)}`;
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32, { ...SCRYPT, maxmem: 64 * 1024 * 1024 });
  return `scrypt:${SCRYPT.N}:${SCRYPT.r}:${SCRYPT.p}:${salt.toString("base64url")}:${hash.toString("base64url")}`;
}

/** True when `secret` matches the stored hash; constant time in the secret's content. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split(":");
  if (parts[0] === "sha256" && parts.length === 2) {
    return safeEqual(Buffer.from(sha256Hex(secret), "hex"), Buffer.from(parts[1], "hex"));
  }
  if (parts[0] === "scrypt" && parts.length === 6) {
    const [, n, r, p, salt, hash] = parts;
    const expected = Buffer.from(hash, "base64url");
    const actual = await scrypt(secret, Buffer.from(salt, "base64url"), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: 64 * 1024 * 1024,
    });
    return safeEqual(actual, expected);
  }
  return false;
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
