import { expect } from "chai";
import {
  ApprovalRegistryCompletionNames,
  ApprovalRegistryCustodyNames,
  ApprovalRegistryDecisionStatusNames,
  ApprovalRegistryExecutionTypeNames,
  ApprovalRegistryRejectionActionNames,
  ApprovalRegistryResetCauseNames,
  ApprovalRegistryTimeoutActionNames,
  LicenceTokenStatusNames,
} from "../../abis/index.ts";
import { Custody } from "../../api/src/domain/departments/departmentSchemas.ts";
import { ApprovalStatus, RequestStatus } from "../../api/src/routes/schemas/common.ts";
import { publicInvalidationReason } from "../../api/src/routes/schemas/contractNames.ts";
import { WorkflowStageInput } from "../../api/src/routes/schemas/workflow.ts";

/**
 * The API's public enums, as the spec and the API's clients know them. They are pinned here on purpose: the schemas
 * take them from abis/enums.ts (api/src/routes/schemas/contractNames.ts), so a contract enum that gains, loses or renames
 * a member changes the API, and this test makes that a decision (follow it, or map it in contractNames.ts) rather
 * than an accident.
 */
const PUBLIC = {
  executionType: ["SEQUENTIAL", "PARALLEL"],
  completionCriteria: ["ALL", "ANY", "THRESHOLD"],
  onTimeout: ["NOTIFY", "ESCALATE", "AUTO_REJECT"],
  onRejection: ["FAIL_REQUEST", "RETRY_STAGE", "ESCALATE"],
  approvalStatus: ["PENDING", "APPROVED", "REJECTED", "CHANGES_REQUESTED", "REVIEW_REQUIRED"],
  custody: ["CUSTODIAL", "DEPARTMENT_HELD"],
  requestStatus: [
    "DRAFT",
    "SUBMITTED",
    "PENDING_RESUBMISSION",
    "APPROVED",
    "REJECTED",
    "CANCELLED",
    "SUSPENDED",
    "REVOKED",
    "EXPIRED",
  ],
  invalidationReason: ["RESUBMITTED", "ESCALATION_SENT_BACK", "STAGE_RETRIED", "STAGE_REOPENED"],
};

/** The enum's members under optional(), default() and describe() wrappers. */
const optionsOf = (schema: unknown): string[] => {
  const found = schema as { options?: string[]; unwrap?: () => unknown };
  return found.options ?? optionsOf(found.unwrap!());
};
const stageField = (name: keyof typeof WorkflowStageInput.shape) => optionsOf(WorkflowStageInput.shape[name]);

describe("the API's names for the contracts' enums (api/src/routes/schemas/contractNames.ts)", function () {
  it("the schemas answer and accept the public names", function () {
    expect(stageField("executionType")).to.deep.equal(PUBLIC.executionType);
    expect(stageField("completionCriteria")).to.deep.equal(PUBLIC.completionCriteria);
    expect(stageField("onTimeout")).to.deep.equal(PUBLIC.onTimeout);
    expect(stageField("onRejection")).to.deep.equal(PUBLIC.onRejection);
    expect(ApprovalStatus.options).to.deep.equal(PUBLIC.approvalStatus);
    expect(Custody.options).to.deep.equal(PUBLIC.custody);
    expect(RequestStatus.options).to.deep.equal(PUBLIC.requestStatus);
  });

  it("are the contracts' names, but for the differences contractNames.ts documents", function () {
    expect(ApprovalRegistryExecutionTypeNames).to.deep.equal(PUBLIC.executionType);
    expect(ApprovalRegistryCompletionNames).to.deep.equal(PUBLIC.completionCriteria);
    expect(ApprovalRegistryTimeoutActionNames).to.deep.equal(["NONE", ...PUBLIC.onTimeout]);
    expect(ApprovalRegistryRejectionActionNames).to.deep.equal(PUBLIC.onRejection);
    expect(ApprovalRegistryDecisionStatusNames).to.deep.equal(PUBLIC.approvalStatus);
    expect(ApprovalRegistryCustodyNames).to.deep.equal(PUBLIC.custody);
    expect(["NONE", ...LicenceTokenStatusNames.slice(1), "EXPIRED"]).to.deep.equal(["NONE", ...PUBLIC.requestStatus]);
    expect(LicenceTokenStatusNames[0]).to.equal("NONE");
  });

  it("shows each reset cause the index records under the API's invalidationReason, and other reasons as they are", function () {
    expect(ApprovalRegistryResetCauseNames.map(publicInvalidationReason)).to.deep.equal(PUBLIC.invalidationReason);
    expect(ApprovalRegistryResetCauseNames).to.include("ESCALATION_RETURNED");
    expect(publicInvalidationReason("DOCUMENT_UPDATED")).to.equal("DOCUMENT_UPDATED");
  });
});
