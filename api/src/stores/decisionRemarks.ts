/** A department decision's off-chain part (app.decision_remarks): the remarks whose keccak256 is on chain. */
import type { Db } from "../db/queryable.ts";

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
  await db.query(
    `INSERT INTO decision_remarks (tx_hash, request_id, department_code, decision, remarks, remarks_hash, reason,
                                   required_documents, chain_tx_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.txHash,
      row.requestId,
      row.departmentCode,
      row.decision,
      row.remarks,
      row.remarksHash,
      row.reason,
      row.requiredDocuments === null ? null : JSON.stringify(row.requiredDocuments),
      row.chainTxId,
    ],
  );
}
