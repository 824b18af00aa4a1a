/**
 * OID4VCI offers and nonces (credential_offers, credential_nonces): only SHA-256 hashes of the pre-authorized codes
 * and c_nonce values are stored; each is spent by one atomic statement, so two concurrent uses cannot both succeed.
 */
import type { Db } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export async function insertCredentialOffer(
  db: Db,
  row: { id: string; requestId: string; codeHash: Buffer; expiresAt: Date },
): Promise<void> {
  await insertRow(db, "credential_offers", row);
}

/** Spends an offer's pre-authorized code: the offer when it was not redeemed before (expired or not), else undefined. */
export async function redeemCredentialOffer(
  db: Db,
  codeHash: Buffer,
): Promise<{ id: string; expiresAt: Date } | undefined> {
  const { rows } = await db.query(
    `UPDATE credential_offers SET redeemed_at = now() WHERE code_hash = $1 AND redeemed_at IS NULL
     RETURNING id, expires_at`,
    [codeHash],
  );
  return rows[0] && { id: rows[0].id, expiresAt: rows[0].expires_at };
}

/** Stores a new c_nonce, clearing the expired ones. */
export async function insertCredentialNonce(db: Db, nonceHash: Buffer, expiresAt: Date): Promise<void> {
  await db.query(`DELETE FROM credential_nonces WHERE expires_at < now()`);
  await insertRow(db, "credential_nonces", { nonceHash, expiresAt });
}

/** Spends a c_nonce: whether it existed and had not expired. */
export async function spendCredentialNonce(db: Db, nonceHash: Buffer): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM credential_nonces WHERE nonce_hash = $1 AND expires_at > now()`, [
    nonceHash,
  ]);
  return rowCount === 1;
}
