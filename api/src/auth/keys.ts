/**
 * The ES256 key that signs service tokens: JWT_PRIVATE_KEY (PKCS#8 PEM) when set, otherwise (never in production)
 * a P-256 key generated once and kept in DATA_DIR/secrets/jwt-signing-key.pem (mode 0600) so restarts and sibling
 * API processes on the same data directory share it. The `kid` is the key's RFC 7638 JWK thumbprint.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { calculateJwkThumbprint, type JWK } from "jose";
import type { Config } from "../config.ts";

export const JWT_ALGORITHM = "ES256";

export interface SigningKey {
  privateKey: KeyObject;
  kid: string;
  /** The public key as published at /.well-known/jwks.json. */
  publicJwk: JWK & { kid: string; alg: string; use: string };
}

/** Where a development signing key lives (tests read it to sign tokens of their own). */
export function signingKeyFile(dataDir: string): string {
  return path.join(dataDir, "secrets", "jwt-signing-key.pem");
}

export async function loadSigningKey(
  config: Pick<Config, "jwtPrivateKey" | "nodeEnv" | "dataDir">,
): Promise<SigningKey> {
  let pem: string;
  let source: string;
  if (config.jwtPrivateKey) {
    // Environment variables often carry PEM with literal "\n".
    pem = config.jwtPrivateKey.includes("\\n") ? config.jwtPrivateKey.replaceAll("\\n", "\n") : config.jwtPrivateKey;
    source = "JWT_PRIVATE_KEY";
  } else {
    if (config.nodeEnv === "production")
      throw new Error("JWT_PRIVATE_KEY is required in production (no generated signing key)");
    pem = await developmentKeyPem(config.dataDir);
    source = signingKeyFile(config.dataDir);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw new Error(`${source} is not a PKCS#8 PEM private key`);
  }
  if (privateKey.asymmetricKeyType !== "ec" || privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw new Error(`${source} must be an EC P-256 key (ES256)`);
  }
  const jwk = createPublicKey(privateKey).export({ format: "jwk" }) as JWK;
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  const kid = await calculateJwkThumbprint(publicJwk, "sha256");
  return { privateKey, kid, publicJwk: { ...publicJwk, kid, alg: JWT_ALGORITHM, use: "sig" } };
}

async function developmentKeyPem(dataDir: string): Promise<string> {
  const file = signingKeyFile(dataDir);
  const existing = await readFile(file, "utf8").catch(() => undefined);
  if (existing) return existing;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  // "wx": if a sibling process wrote the key first, keep theirs.
  await writeFile(file, pem, { mode: 0o600, flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  await chmod(file, 0o600);
  return readFile(file, "utf8");
}
