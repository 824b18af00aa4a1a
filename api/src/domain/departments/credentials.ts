/**
 * A department's API credentials: an API key (256 random bits, stored as SHA-256, compared in constant time) and
 * an API secret (256 random bits, the HMAC key of signed requests, stored sealed by the key vault because the
 * server needs it back to verify signatures). Both are shown once, at registration and at regeneration.
 */
import type { KeyVault } from "../../chain/keyVault.ts";
import { hashSecret, randomSecret } from "../../auth/secrets.ts";

export const API_KEY_PREFIX = "ldk_";
export const API_SECRET_PREFIX = "lds_";

export interface IssuedCredentials {
  apiKey: string;
  apiSecret: string;
  apiKeyHash: string;
  apiSecretSealed: Buffer;
}

/** Associated data binding a sealed secret to its department: a ciphertext moved to another row does not open. */
const aad = (code: string) => `department-api-secret:${code}`;

export async function issueCredentials(vault: KeyVault, code: string): Promise<IssuedCredentials> {
  const apiKey = `${API_KEY_PREFIX}${randomSecret(32)}`;
  const apiSecret = `${API_SECRET_PREFIX}${randomSecret(32)}`;
  return { apiKey, apiSecret, apiKeyHash: await hashSecret(apiKey, "random"), apiSecretSealed: sealSecret(vault, code, apiSecret) };
}

export function sealSecret(vault: KeyVault, code: string, apiSecret: string): Buffer {
  // The vault seals hex; the secret's UTF-8 bytes go in as hex.
  return vault.seal(Buffer.from(apiSecret, "utf8").toString("hex"), aad(code));
}

export function openSecret(vault: KeyVault, code: string, sealed: Buffer): string {
  return Buffer.from(vault.open(sealed, aad(code)).slice(2), "hex").toString("utf8");
}
