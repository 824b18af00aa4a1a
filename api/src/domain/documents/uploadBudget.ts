/**
 * Budgets of document uploads. Every version is a transaction of the shared operator wallet and a stored file, so
 * one applicant may not upload without end: a document has at most DOCUMENT_VERSIONS_PER_DOCUMENT versions, and the
 * versions uploaded to one applicant's requests (by the applicant or a client acting for them) in any 24 hours are
 * at most DOCUMENT_VERSIONS_PER_DAY, of at most DOCUMENT_BYTES_PER_DAY bytes in all. Over a budget the answer is
 * DOCUMENT_BUDGET_EXCEEDED: 409 for a document's versions (waiting does not help), 429 with Retry-After for the
 * daily ones.
 *
 * The budget is checked three times: before the body is read (with what is already used), before the file is stored
 * (with its size), and finally inside the database transaction that records the version, under the applicant's
 * advisory lock. Only that last check is exact, so parallel uploads never pass a budget together; the earlier ones
 * spare the API the body, the storage and the chain simulation of an upload that cannot fit.
 */
import type { Config } from "../../config.ts";
import type { Db } from "../../db/queryable.ts";
import { AppError } from "../errors.ts";
import { type BudgetedUpload, lockUploadBudget, uploadsInWindow } from "../../stores/documentRecords.ts";

export const BUDGET_WINDOW_HOURS = 24;
const WINDOW_MS = BUDGET_WINDOW_HOURS * 3600 * 1000;

/** The budgets in force; 0 turns one off. */
export interface UploadBudget {
  versionsPerDocument: number;
  versionsPerDay: number;
  bytesPerDay: number;
}

export const uploadBudgetOf = (config: Config): UploadBudget => ({
  versionsPerDocument: config.documentVersionsPerDocument,
  versionsPerDay: config.documentVersionsPerDay,
  bytesPerDay: config.documentBytesPerDay,
});

/** The upload to fit: the version it would be, and its size (unknown before the body is read). */
export interface NextUpload {
  version: number;
  fileSize?: number;
}

const budgetExceeded = (status: number, message: string, details: Record<string, unknown>, retryAfter?: number) =>
  new AppError(
    status,
    "DOCUMENT_BUDGET_EXCEEDED",
    message,
    retryAfter === undefined
      ? details
      : { ...details, windowHours: BUDGET_WINDOW_HOURS, retryAfterSeconds: retryAfter },
    retryAfter === undefined ? undefined : { "Retry-After": String(retryAfter) },
  );

/**
 * Whole seconds until the window's oldest uploads have left it so that `fits` holds for the rest: each upload leaves
 * 24 hours after it was recorded.
 */
function secondsUntil(now: Date, uploads: BudgetedUpload[], fits: (rest: BudgetedUpload[]) => boolean): number {
  let k = 0;
  while (k < uploads.length && !fits(uploads.slice(k))) k++;
  const frees = k === 0 ? now.getTime() : uploads[k - 1].createdAt.getTime() + WINDOW_MS;
  return Math.max(1, Math.ceil((frees - now.getTime()) / 1000));
}

/**
 * The refusal of `next` given the applicant's uploads in the window (oldest first, measured at `now`), or undefined
 * when it fits every budget. Before the body is read (no fileSize) a budget refuses only once it is used up.
 */
export function budgetRefusal(
  budget: UploadBudget,
  next: NextUpload,
  usage: { now: Date; uploads: BudgetedUpload[] },
): AppError | undefined {
  const { now, uploads } = usage;
  if (budget.versionsPerDocument > 0 && next.version > budget.versionsPerDocument) {
    return budgetExceeded(409, `A document may have at most ${budget.versionsPerDocument} versions`, {
      budget: "VERSIONS_PER_DOCUMENT",
      limit: budget.versionsPerDocument,
    });
  }
  if (budget.versionsPerDay > 0 && uploads.length + 1 > budget.versionsPerDay) {
    const retryAfter = secondsUntil(now, uploads, (rest) => rest.length + 1 <= budget.versionsPerDay);
    return budgetExceeded(
      429,
      `At most ${budget.versionsPerDay} document versions may be uploaded to one applicant's requests in ${BUDGET_WINDOW_HOURS} hours`,
      { budget: "VERSIONS_PER_DAY", limit: budget.versionsPerDay, used: uploads.length },
      retryAfter,
    );
  }
  const bytes = (list: BudgetedUpload[]) => list.reduce((sum, upload) => sum + upload.fileSize, 0);
  const size = next.fileSize ?? 1; // before the body: at least one more byte must fit
  if (budget.bytesPerDay > 0 && bytes(uploads) + size > budget.bytesPerDay) {
    const retryAfter = secondsUntil(now, uploads, (rest) => bytes(rest) + size <= budget.bytesPerDay);
    return budgetExceeded(
      429,
      `At most ${budget.bytesPerDay} bytes of documents may be uploaded to one applicant's requests in ${BUDGET_WINDOW_HOURS} hours`,
      {
        budget: "BYTES_PER_DAY",
        limit: budget.bytesPerDay,
        used: bytes(uploads),
        ...(next.fileSize === undefined ? {} : { fileSize: next.fileSize }),
      },
      retryAfter,
    );
  }
  return undefined;
}

/**
 * Throws DOCUMENT_BUDGET_EXCEEDED when `next` does not fit the applicant's budgets. With `lock` (inside the database
 * transaction that records the version), the applicant's budget lock is taken first and held until that transaction
 * ends, so the count includes every upload recorded before and none can be recorded meanwhile.
 */
export async function checkUploadBudget(
  db: Db,
  budget: UploadBudget,
  applicantId: string,
  next: NextUpload,
  options: { lock: boolean },
): Promise<void> {
  if (budget.versionsPerDay <= 0 && budget.bytesPerDay <= 0) {
    const refusal = budgetRefusal(budget, next, { now: new Date(), uploads: [] });
    if (refusal) throw refusal;
    return;
  }
  if (options.lock) await lockUploadBudget(db, applicantId);
  const refusal = budgetRefusal(budget, next, await uploadsInWindow(db, applicantId, BUDGET_WINDOW_HOURS * 3600));
  if (refusal) throw refusal;
}
