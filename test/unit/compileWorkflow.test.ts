import { expect } from "chai";
import { encodeBytes32String, keccak256, toUtf8Bytes } from "ethers";
import { canonicalJson } from "../../api/src/encoding/canonicalJson.ts";
import {
  compileStages,
  definitionHash,
  requiredDocumentTypes,
  sortedStages,
} from "../../api/src/domain/workflows/compileWorkflow.ts";
import type { CreateWorkflowInput, WorkflowStageInput } from "../../api/src/routes/schemas/workflow.ts";

const approval = (departmentCode: string, requiredDocuments: string[] = [], isMandatory = true) => ({
  departmentCode,
  requiredDocuments,
  isMandatory,
});

const stages: WorkflowStageInput[] = [
  {
    stageId: "s2",
    stageName: "Final",
    stageOrder: 2,
    executionType: "PARALLEL",
    requiredApprovals: [
      approval("FIRE", ["SAFETY_PLAN"], false),
      approval("HEALTH", ["SITE_PLAN"]),
      approval("POLICE", [], false),
    ],
    completionCriteria: "THRESHOLD",
    threshold: 2,
    timeoutDays: 1.5,
    onTimeout: "ESCALATE",
    onRejection: "RETRY_STAGE",
  },
  {
    stageId: "s1",
    stageName: "Intake",
    stageOrder: 1,
    executionType: "SEQUENTIAL",
    requiredApprovals: [approval("TOWN", ["SITE_PLAN", "DEED"])],
    completionCriteria: "ALL",
  },
];

describe("workflow compilation (api/src/domain/workflows/compileWorkflow.ts)", function () {
  it("orders stages by stageOrder without changing the input", function () {
    expect(sortedStages(stages).map((s) => s.stageId)).to.deep.equal(["s1", "s2"]);
    expect(stages.map((s) => s.stageId)).to.deep.equal(["s2", "s1"]);
  });

  it("compiles each stage into the approval registry's enum values, mask and department codes", function () {
    expect(compileStages(stages)).to.deep.equal([
      {
        executionType: 0, // SEQUENTIAL
        completion: 0, // ALL
        threshold: 0,
        onTimeout: 0, // no timeout: NONE
        onRejection: 0, // default FAIL_REQUEST
        timeoutSeconds: 0,
        mandatoryMask: 0b1,
        departments: [encodeBytes32String("TOWN")],
      },
      {
        executionType: 1, // PARALLEL
        completion: 2, // THRESHOLD
        threshold: 2,
        onTimeout: 2, // ESCALATE
        onRejection: 1, // RETRY_STAGE
        timeoutSeconds: 129_600, // 1.5 days
        mandatoryMask: 0b010, // only HEALTH, the second department
        departments: ["FIRE", "HEALTH", "POLICE"].map((c) => encodeBytes32String(c)),
      },
    ]);
  });

  it("gives a timeout without an action the NOTIFY action, and drops a threshold outside THRESHOLD", function () {
    const [compiled] = compileStages([{ ...stages[0], completionCriteria: "ANY", onTimeout: undefined }]);
    expect(compiled.onTimeout).to.equal(1); // NOTIFY
    expect(compiled.completion).to.equal(1); // ANY
    expect(compiled.threshold).to.equal(0);
  });

  it("hashes the canonical JSON of the id and the definition, its stages sorted", function () {
    const input: CreateWorkflowInput = { workflowType: "RESORT_LICENSE", name: "Resort", stages };
    const id = "0b6e2d9e-5d9a-4f3e-8d6b-1c2e3f4a5b6c";
    const expected = keccak256(toUtf8Bytes(canonicalJson({ workflowId: id, ...input, stages: sortedStages(stages) })));
    expect(definitionHash(id, input)).to.equal(expected);
    expect(definitionHash(id, { ...input, stages: [...stages].reverse() })).to.equal(expected);
    expect(definitionHash("1b6e2d9e-5d9a-4f3e-8d6b-1c2e3f4a5b6c", input)).to.not.equal(expected);
    expect(definitionHash(id, { ...input, name: "Resort 2" })).to.not.equal(expected);
  });

  it("lists each required document type once, sorted", function () {
    expect(requiredDocumentTypes(stages)).to.deep.equal(["DEED", "SAFETY_PLAN", "SITE_PLAN"]);
  });
});
