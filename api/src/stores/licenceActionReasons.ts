/** Administrators' actions on issued licences (app.licence_actions): the reason text the chain does not hold. */
import type { Db } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export interface LicenceActionRecord {
  txHash: string;
  requestId: string;
  action: "SUSPEND" | "REINSTATE" | "REVOKE";
  reasonCode: number | null;
  reason: string | null;
  chainTxId: string;
}

export async function insertLicenceAction(db: Db, row: LicenceActionRecord): Promise<void> {
  await insertRow(db, "licence_actions", row);
}
