/**
 * Secrets the API must read back (a department's API secret, to verify its signed requests; a webhook's secret,
 * to sign deliveries), sealed at rest by the key vault. Each is bound to its owner as associated data
 * (`<purpose>:<owner id>`): a ciphertext moved to another row does not open. Use cases get a sealer, never the vault.
 */
import type { KeyVault } from "./keyVault.ts";

export interface SecretSealer {
  seal(ownerId: string, secret: string): Buffer;
  open(ownerId: string, sealed: Buffer): string;
}

export type SealedSecretPurpose = "department-api-secret" | "webhook-secret" | "credential-signing-key";

export function secretSealer(vault: KeyVault, purpose: SealedSecretPurpose): SecretSealer {
  const aad = (ownerId: string) => `${purpose}:${ownerId}`;
  return {
    // The vault seals hex; the secret's UTF-8 bytes go in as hex.
    seal: (ownerId, secret) => vault.seal(Buffer.from(secret, "utf8").toString("hex"), aad(ownerId)),
    open: (ownerId, sealed) => Buffer.from(vault.open(sealed, aad(ownerId)).slice(2), "hex").toString("utf8"),
  };
}
