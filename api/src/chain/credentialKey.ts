/**
 * The key that signs licence credentials and status lists (ES256, P-256). Generated once, by whichever process
 * starts first, sealed by the key vault (secretSealer, bound to its key id) in credential_keys, and opened at start;
 * it leaves this module only as signatures. The remote signer cannot hold it (it speaks Ethereum JSON-RPC, secp256k1
 * only), so it is sealed in the vault under either SIGNER mode.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type JsonWebKey,
  type KeyObject,
} from "node:crypto";
import { CompactSign, type CompactJWSHeaderParameters } from "jose";
import type pg from "pg";
import type { KeyVault } from "./keyVault.ts";
import { secretSealer } from "./secretSealer.ts";

/** The verification method's fragment in the issuer's DID document. */
export const CREDENTIAL_KEY_ID = "credential-key-1";

export interface CredentialSigner {
  /** The public key as a JWK (kty EC, crv P-256), as the DID document publishes it. */
  readonly publicJwk: JsonWebKey;
  /** A compact JWS (ES256) of `payload` under `header` (alg is set here). */
  signJws(header: Omit<CompactJWSHeaderParameters, "alg">, payload: Uint8Array): Promise<string>;
  /** The base64url ES256 signature (r ‖ s) of `data`, for libraries that assemble the JWS themselves (SD-JWT). */
  sign(data: string): Promise<string>;
}

export async function loadCredentialKey(pool: pg.Pool, vault: KeyVault): Promise<CredentialSigner> {
  const sealer = secretSealer(vault, "credential-signing-key");
  const fresh = generateKeyPairSync("ec", { namedCurve: "P-256" });
  // Two processes starting together both try; the first row wins and both read it back.
  await pool.query(
    `INSERT INTO credential_keys (key_id, public_jwk, sealed_key) VALUES ($1, $2, $3) ON CONFLICT (key_id) DO NOTHING`,
    [
      CREDENTIAL_KEY_ID,
      fresh.publicKey.export({ format: "jwk" }),
      sealer.seal(CREDENTIAL_KEY_ID, JSON.stringify(fresh.privateKey.export({ format: "jwk" }))),
    ],
  );
  const { rows } = await pool.query(`SELECT sealed_key FROM credential_keys WHERE key_id = $1`, [CREDENTIAL_KEY_ID]);
  const privateKey = createPrivateKey({
    key: JSON.parse(sealer.open(CREDENTIAL_KEY_ID, rows[0].sealed_key)),
    format: "jwk",
  });
  return credentialSigner(privateKey);
}

/** A signer over a private key already opened (exported for tests that need no database). */
export function credentialSigner(privateKey: KeyObject): CredentialSigner {
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: "jwk" });
  return {
    publicJwk: { kty, crv, x, y },
    signJws: (header, payload) =>
      new CompactSign(payload).setProtectedHeader({ ...header, alg: "ES256" }).sign(privateKey),
    sign: async (data) =>
      sign("sha256", Buffer.from(data), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url"),
    toJSON: () => "[CredentialSigner]",
    [Symbol.for("nodejs.util.inspect.custom")]: () => "[CredentialSigner]",
  } as CredentialSigner;
}
