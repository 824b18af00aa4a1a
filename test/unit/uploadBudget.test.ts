import { expect } from "chai";
import { budgetRefusal, type UploadBudget } from "../../api/src/domain/documents/uploadBudget.ts";

describe("uploadBudget: budgetRefusal", function () {
  const now = new Date("2026-01-02T12:00:00Z");
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3600_000);
  const budget: UploadBudget = { versionsPerDocument: 3, versionsPerDay: 3, bytesPerDay: 1000 };
  const usage = (...uploads: [number, number][]) => ({
    now,
    uploads: uploads.map(([hours, fileSize]) => ({ createdAt: hoursAgo(hours), fileSize })),
  });

  it("lets an upload through while every budget has room", function () {
    expect(budgetRefusal(budget, { version: 3, fileSize: 500 }, usage([5, 100], [1, 100]))).to.equal(undefined);
  });

  it("refuses a version past the document's budget with 409 DOCUMENT_BUDGET_EXCEEDED, without Retry-After", function () {
    const refusal = budgetRefusal(budget, { version: 4 }, usage())!;
    expect(refusal).to.include({ status: 409, code: "DOCUMENT_BUDGET_EXCEEDED" });
    expect(refusal.details).to.deep.equal({ budget: "VERSIONS_PER_DOCUMENT", limit: 3 });
    expect(refusal.headers).to.equal(undefined);
  });

  it("refuses one version too many in 24 hours with 429, retrying once the oldest leaves the window", function () {
    const refusal = budgetRefusal(budget, { version: 1, fileSize: 1 }, usage([20, 1], [10, 1], [1, 1]))!;
    expect(refusal).to.include({ status: 429, code: "DOCUMENT_BUDGET_EXCEEDED" });
    expect(refusal.details).to.deep.equal({
      budget: "VERSIONS_PER_DAY",
      limit: 3,
      used: 3,
      windowHours: 24,
      retryAfterSeconds: 4 * 3600,
    });
    expect(refusal.headers).to.deep.equal({ "Retry-After": String(4 * 3600) });
  });

  it("refuses bytes past the daily budget, retrying once enough of the oldest bytes have left the window", function () {
    // 900 bytes used; 500 more fit only once the 300 (20 h ago) and the 200 (10 h ago) have left: in 14 hours.
    const roomy = { ...budget, versionsPerDay: 10 };
    const refusal = budgetRefusal(roomy, { version: 1, fileSize: 500 }, usage([20, 300], [10, 200], [1, 400]))!;
    expect(refusal).to.include({ status: 429, code: "DOCUMENT_BUDGET_EXCEEDED" });
    expect(refusal.details).to.deep.equal({
      budget: "BYTES_PER_DAY",
      limit: 1000,
      used: 900,
      fileSize: 500,
      windowHours: 24,
      retryAfterSeconds: 14 * 3600,
    });
  });

  it("before the body is read, refuses only a budget already used up", function () {
    expect(budgetRefusal(budget, { version: 1 }, usage([1, 999]))).to.equal(undefined);
    expect(budgetRefusal(budget, { version: 1 }, usage([1, 1000]))!.details).to.include({ budget: "BYTES_PER_DAY" });
  });

  it("0 turns a budget off", function () {
    const off: UploadBudget = { versionsPerDocument: 0, versionsPerDay: 0, bytesPerDay: 0 };
    expect(budgetRefusal(off, { version: 32_000, fileSize: 10 ** 9 }, usage([1, 10 ** 9], [1, 10 ** 9]))).to.equal(
      undefined,
    );
  });
});
