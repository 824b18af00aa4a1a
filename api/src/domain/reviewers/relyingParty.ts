/**
 * The WebAuthn relying party the console's passkeys belong to: the host and origin of PUBLIC_BASE_URL (the console
 * is served at <PUBLIC_BASE_URL>/console). ES256 only, because the chain verifies P-256; user verification is
 * required, so a signature always means the reviewer unlocked their device.
 */
import type { Config } from "../../config.ts";
import { AppError } from "../errors.ts";

export interface RelyingParty {
  /** The RP ID: PUBLIC_BASE_URL's host name (localhost for a loopback address). */
  rpID: string;
  /** The expected origin of every ceremony's clientDataJSON. */
  origin: string;
  rpName: string;
}

/** COSE algorithm ES256 (ECDSA P-256 with SHA-256): the only one the passkey account can verify. */
export const ES256 = -7;

/** How long a registration or sign-in challenge may be answered. */
export const CHALLENGE_SECONDS = 5 * 60;

/**
 * An IP address cannot be an RP ID, so a development stack on a loopback address (npm start's default
 * http://127.0.0.1:PORT) serves its console at http://localhost:PORT, a secure context browsers accept.
 */
export function relyingParty(config: Pick<Config, "publicBaseUrl">): RelyingParty {
  const url = new URL(config.publicBaseUrl!);
  if (/^127\.\d+\.\d+\.\d+$|^\[::1\]$/.test(url.hostname)) url.hostname = "localhost";
  return { rpID: url.hostname, origin: url.origin, rpName: "Licence review console" };
}

/** A refused passkey ceremony (400 at registration, 401 at sign-in): the reason, never the stored key. */
export const passkeyInvalid = (status: 400 | 401, message: string) => new AppError(status, "PASSKEY_INVALID", message);
