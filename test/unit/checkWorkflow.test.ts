import { expect } from "chai";
import { checkWorkflow, type DepartmentStates } from "../../api/src/domain/workflows/validateWorkflow.ts";
import { CreateWorkflowInput } from "../../api/src/routes/schemas/workflow.ts";
import { dateFromUnixSeconds, isoFromUnixSeconds } from "../../api/src/encoding/unixTime.ts";

// The rules one by one, with the departments as the index would give them; the same rules are exercised over HTTP
// (POST /workflows/validate) in test/stack/workflows.test.ts.
type Json = Record<string, unknown>;
const departments: DepartmentStates = new Map([
  ["PLAN", { active: true }],
  ["HEALTH", { active: true }],
  ["FIRE", { active: true }],
  ["CLOSED", { active: false }],
]);
const approval = (departmentCode: string, extra: Json = {}) => ({
  departmentCode,
  requiredDocuments: ["SITE_PLAN"],
  isMandatory: true,
  ...extra,
});
const stage = (order: number, extra: Json = {}) => ({
  stageId: `s${order}`,
  stageName: `Stage ${order}`,
  stageOrder: order,
  executionType: "PARALLEL",
  completionCriteria: "ALL",
  requiredApprovals: [approval("PLAN")],
  ...extra,
});
const definition = (extra: Json = {}) =>
  CreateWorkflowInput.parse({
    workflowType: "BUILDING_PERMIT",
    name: "Candidate",
    stages: [stage(1), stage(2, { requiredApprovals: [approval("HEALTH")] })],
    ...extra,
  });
const problems = (input: CreateWorkflowInput) =>
  checkWorkflow(input, departments).map((error) => `${error.code} ${error.path}`);

describe("checkWorkflow (api/src/domain/workflows/validateWorkflow.ts)", function () {
  it("finds nothing wrong with a valid definition", function () {
    expect(problems(definition())).to.deep.equal([]);
  });

  const cases: [string, CreateWorkflowInput, string[]][] = [
    [
      "an unknown request type",
      definition({ workflowType: "FISHING_LICENSE" }),
      ["UNKNOWN_WORKFLOW_TYPE workflowType"],
    ],
    ["no stages", definition({ stages: [] }), ["NO_STAGES stages"]],
    [
      "17 stages",
      definition({ stages: Array.from({ length: 17 }, (_, i) => stage(i + 1)) }),
      ["TOO_MANY_STAGES stages"],
    ],
    [
      "a gap in the stage orders",
      definition({ stages: [stage(1), stage(3)] }),
      ["NON_CONTIGUOUS_STAGE_ORDER stages[1].stageOrder"],
    ],
    [
      "a stage id used twice",
      definition({ stages: [stage(1), { ...stage(2), stageId: "s1" }] }),
      ["DUPLICATE_STAGE_ID stages[1].stageId"],
    ],
    [
      "an unregistered department",
      definition({ stages: [stage(1, { requiredApprovals: [approval("NOPE")] })] }),
      ["UNKNOWN_DEPARTMENT stages[0].requiredApprovals[0].departmentCode"],
    ],
    [
      "a deactivated department",
      definition({ stages: [stage(1, { requiredApprovals: [approval("CLOSED")] })] }),
      ["INACTIVE_DEPARTMENT stages[0].requiredApprovals[0].departmentCode"],
    ],
    [
      "a threshold above the stage's departments",
      definition({
        stages: [
          stage(1, {
            completionCriteria: "THRESHOLD",
            threshold: 3,
            requiredApprovals: [approval("PLAN", { isMandatory: false }), approval("HEALTH", { isMandatory: false })],
          }),
        ],
      }),
      ["THRESHOLD_OUT_OF_RANGE stages[0].threshold"],
    ],
    [
      "a document type that is not a code",
      definition({
        stages: [stage(1, { requiredApprovals: [approval("PLAN", { requiredDocuments: ["site plan"] })] })],
      }),
      ["UNKNOWN_DOCUMENT_TYPE stages[0].requiredApprovals[0].requiredDocuments[0]"],
    ],
    [
      "onTimeout without timeoutDays",
      definition({ stages: [stage(1, { onTimeout: "AUTO_REJECT" })] }),
      ["CONTRADICTORY_SETTINGS stages[0].onTimeout"],
    ],
    [
      "ANY with two mandatory departments",
      definition({
        stages: [stage(1, { completionCriteria: "ANY", requiredApprovals: [approval("PLAN"), approval("HEALTH")] })],
      }),
      ["CONTRADICTORY_SETTINGS stages[0].completionCriteria"],
    ],
  ];
  for (const [situation, input, expected] of cases) {
    it(`reports ${expected.map((e) => e.split(" ")[0]).join(", ")} for ${situation}`, function () {
      expect(problems(input)).to.deep.equal(expected);
    });
  }

  it("reports every problem at once, in the order of the definition", function () {
    const input = definition({
      workflowType: "X",
      stages: [stage(1, { requiredApprovals: [approval("NOPE"), approval("NOPE")] }), { ...stage(1), stageId: "s9" }],
    });
    expect(problems(input)).to.deep.equal([
      "UNKNOWN_WORKFLOW_TYPE workflowType",
      "DUPLICATE_STAGE_ORDER stages[1].stageOrder",
      "UNKNOWN_DEPARTMENT stages[0].requiredApprovals[0].departmentCode",
      "DUPLICATE_DEPARTMENT_IN_STAGE stages[0].requiredApprovals[1].departmentCode",
    ]);
  });

  it("gives every problem a message", function () {
    for (const error of checkWorkflow(definition({ workflowType: "X", stages: [] }), departments)) {
      expect(error.message).to.be.a("string").and.not.equal("");
    }
  });
});

describe("unixTime (api/src/encoding/unixTime.ts)", function () {
  it("reads seconds as the chain (bigint), the index (string) and a job (number) give them", function () {
    const iso = "2026-11-25T18:00:00.000Z";
    const seconds = Date.parse(iso) / 1000;
    expect(isoFromUnixSeconds(BigInt(seconds))).to.equal(iso);
    expect(isoFromUnixSeconds(String(seconds))).to.equal(iso);
    expect(dateFromUnixSeconds(seconds).getTime()).to.equal(seconds * 1000);
  });
});
