/** Administrators' actions on issued licences (app.licence_actions): the reason text the chain does not hold. */
import type { Db } from "../db/queryable.ts";

export interface LicenceActionRecord {
  txHash: string;
  requestId: string;
  action: "SUSPEND" | "REINSTATE" | "REVOKE";
  reasonCode: number | null;
  reason: string | null;
  chainTxId: string;
}

export async function insertLicenceAction(db: Db, row: LicenceActionRecord): Promise<void> {
  await db.query(
    `INSERT INTO licence_actions (tx_hash, request_id, action, reason_code, reason, chain_tx_id)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [row.txHash, row.requestId, row.action, row.reasonCode, row.reason, row.chainTxId],
  );
}
