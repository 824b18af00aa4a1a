/** What each stored version of a document carries (PDF active content, M7), shown to reviewers before they open it. */
import type pg from "pg";
import type { PdfFinding } from "../storage/pdfActiveContent.ts";

/** The findings of each version of the document, by version number. */
export async function activeContentByVersion(pool: pg.Pool, documentId: string): Promise<Map<number, PdfFinding[]>> {
  const { rows } = await pool.query(`SELECT version, active_content FROM document_versions WHERE document_id = $1`, [
    documentId,
  ]);
  return new Map(rows.map((r) => [r.version as number, r.active_content as PdfFinding[]]));
}
