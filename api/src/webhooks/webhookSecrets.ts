/**
 * Seals and opens webhook secrets (each bound to its webhook id), so the webhook use case never holds the key
 * vault itself. Until the domain context carries a sealing service of its own, it is built over the vault by
 * whoever composes the routes.
 */
import type { KeyVault } from "../chain/keyVault.ts";
import { openWebhookSecret, sealWebhookSecret } from "./webhookStore.ts";

export interface WebhookSecrets {
  seal(webhookId: string, secret: string): Buffer;
  open(webhookId: string, sealed: Buffer): string;
}

export function vaultWebhookSecrets(vault: KeyVault): WebhookSecrets {
  return {
    seal: (webhookId, secret) => sealWebhookSecret(vault, webhookId, secret),
    open: (webhookId, sealed) => openWebhookSecret(vault, webhookId, sealed),
  };
}
