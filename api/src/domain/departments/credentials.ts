/**
 * A department's API credentials: an API key (256 random bits, stored as SHA-256, compared in constant time) and
 * an API secret (256 random bits, the HMAC key of signed requests, stored sealed because the server needs it back
 * to verify signatures). Both are shown once, at registration and at regeneration.
 */
import type { SecretSealer } from "../../chain/secretSealer.ts";
import { hashSecret, randomSecret } from "../../auth/secrets.ts";

export const API_KEY_PREFIX = "ldk_";
export const API_SECRET_PREFIX = "lds_";

export interface IssuedCredentials {
  apiKey: string;
  apiSecret: string;
  apiKeyHash: string;
  apiSecretSealed: Buffer;
}

export async function issueCredentials(secrets: SecretSealer, code: string): Promise<IssuedCredentials> {
  const apiKey = `${API_KEY_PREFIX}${randomSecret(32)}`;
  const apiSecret = `${API_SECRET_PREFIX}${randomSecret(32)}`;
  return {
    apiKey,
    apiSecret,
    apiKeyHash: await hashSecret(apiKey, "random"),
    apiSecretSealed: secrets.seal(code, apiSecret),
  };
}
