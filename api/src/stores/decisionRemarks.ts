/** A department decision's off-chain part (app.decision_remarks): the remarks whose keccak256 is on chain. */
import type { Db } from "../db/queryable.ts";
import { insertRow } from "./insertRow.ts";

export interface DecisionRemarks {
  txHash: string;
  requestId: string;
  departmentCode: string;
  decision: "APPROVED" | "REJECTED" | "CHANGES_REQUESTED";
  remarks: string;
  remarksHash: string;
  reason: string | null;
  requiredDocuments: string[] | null;
  chainTxId: string;
}

export async function insertDecisionRemarks(db: Db, row: DecisionRemarks): Promise<void> {
  const { requiredDocuments } = row;
  await insertRow(db, "decision_remarks", {
    ...row,
    requiredDocuments: requiredDocuments === null ? null : JSON.stringify(requiredDocuments),
  });
}
