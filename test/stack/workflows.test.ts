import { expect } from "chai";
import { approvalRegistry } from "../../api/src/chain/contracts.ts";
import { applicantToken, clientToken } from "./support/authClient.ts";
import { b32, createDriver, registry, type Driver } from "./support/platformDriver.ts";
import { pdf, png } from "./support/sampleFiles.ts";
import { current } from "./support/stackFixture.ts";
import { apiClient as client, type Json, expectError } from "./support/httpClient.ts";
import { letters } from "./support/sessions.ts";

const TYPE = "RESORT_LICENSE"; // other stack tests use BUILDING_PERMIT (each seeds its own), and expect TRADE_LICENSE to have no workflow
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

describe("workflows: administration (HTTP, real stack)", function () {
  let driver: Driver;
  let admin: ReturnType<typeof client>;
  let applicant: ReturnType<typeof client>;
  // Department codes are letters and underscores (the departments API's pattern): the run id spelled in letters.
  const tag = letters(String(Date.now() % 1e7));
  const [PLAN, HEALTH, LEGACY, CLOSED] = ["PLAN", "HEALTH", "LEGACY", "CLOSED"].map((d) => `WF_${d}_${tag}`);
  const applicantId = `resort-owner-${tag.toLowerCase()}`;

  const v1Input = {
    workflowType: TYPE,
    name: "Resort licence",
    description: "Version 1",
    stages: [
      {
        stageId: "intake",
        stageName: "Intake v1",
        stageOrder: 1,
        executionType: "SEQUENTIAL",
        completionCriteria: "ALL",
        requiredApprovals: [{ departmentCode: PLAN, requiredDocuments: ["SITE_PLAN"], isMandatory: true }],
      },
      {
        stageId: "legacy",
        stageName: "Legacy check",
        stageOrder: 2,
        executionType: "PARALLEL",
        completionCriteria: "ALL",
        timeoutDays: 10,
        onTimeout: "ESCALATE",
        requiredApprovals: [{ departmentCode: LEGACY, requiredDocuments: [], isMandatory: true }],
      },
    ],
  };
  const v2Input = {
    workflowType: TYPE,
    name: "Resort licence (health review)",
    stages: [
      {
        stageId: "health",
        stageName: "Health v2",
        stageOrder: 2,
        executionType: "PARALLEL",
        completionCriteria: "THRESHOLD",
        threshold: 1,
        onRejection: "RETRY_STAGE",
        requiredApprovals: [
          { departmentCode: HEALTH, requiredDocuments: ["HEALTH_CERT"], isMandatory: false },
          { departmentCode: PLAN, requiredDocuments: [], isMandatory: false },
        ],
      },
      {
        stageId: "intake",
        stageName: "Intake v2",
        stageOrder: 1,
        executionType: "SEQUENTIAL",
        completionCriteria: "ALL",
        requiredApprovals: [{ departmentCode: PLAN, requiredDocuments: ["SITE_PLAN"], isMandatory: true }],
      },
    ],
  };

  let v1: Json;
  let v2: Json;
  let requestOnV1: string;

  const registrations = async () =>
    (await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions WHERE kind = 'REGISTER_WORKFLOW'`))
      .rows[0].n as number;
  const chainIdOf = async (workflowId: string) =>
    Number(
      (
        await driver.core.pool.query(
          `SELECT iw.workflow_id FROM workflows w JOIN index.workflows iw ON iw.definition_hash = w.definition_hash WHERE w.id = $1`,
          [workflowId],
        )
      ).rows[0].workflow_id,
    );
  const onChain = async (chainId: number) => {
    const data = await driver.core.provider.call({
      to: current().deployment.contracts.ApprovalRegistry,
      data: approvalRegistry.encodeFunctionData("workflow", [chainId]),
    });
    return approvalRegistry.decodeFunctionResult("workflow", data)[0];
  };
  const activeOnChain = async () => {
    const data = await driver.core.provider.call({
      to: current().deployment.contracts.ApprovalRegistry,
      data: approvalRegistry.encodeFunctionData("activeWorkflowOf", [b32(TYPE)]),
    });
    return Number(approvalRegistry.decodeFunctionResult("activeWorkflowOf", data)[0]);
  };
  const auditOf = async (workflowId: string) =>
    (
      await driver.core.pool.query(
        `SELECT action, actor_type, old_value, new_value, tx_hash FROM audit_logs WHERE entity_type = 'WORKFLOW' AND entity_id = $1 ORDER BY created_at`,
        [workflowId],
      )
    ).rows;
  const pinnedWorkflow = async (requestId: string) => {
    const tokenId = (await applicant.get(`/requests/${requestId}`)).body.tokenId;
    return Number(
      (await driver.index.query(`SELECT workflow_id FROM licences WHERE token_id = $1`, [tokenId])).rows[0].workflow_id,
    );
  };
  const setDepartmentActive = (code: string, active: boolean) =>
    driver.send(
      "UPDATE_DEPARTMENT",
      driver.admin,
      "ApprovalRegistry",
      registry.encodeFunctionData("setDepartmentActive", [b32(code), active]),
    );

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    for (const code of [PLAN, HEALTH, LEGACY, CLOSED]) await driver.department(code);
    await setDepartmentActive(CLOSED, false);
    admin = client(
      stack.api.url,
      await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin"),
    );
    applicant = client(stack.api.url, await applicantToken(stack.api.url, { id: applicantId, name: "Resort Owner" }));
    // Start from a type without an active workflow, whatever ran before.
    for (const workflow of (await admin.get("/workflows?isActive=true")).body.workflows) {
      if (workflow.workflowType === TYPE)
        expect((await admin.delete(`/workflows/${workflow.workflowId}`)).status).to.equal(200);
    }
  });
  after(async () => driver?.close());

  describe("access", function () {
    it("is for administrators only: 401 anonymous, 403 applicant", async function () {
      const anonymous = client(current().api.url);
      expectError(await anonymous.get("/workflows"), 401);
      for (const response of [
        await applicant.get("/workflows"),
        await applicant.post("/workflows", v1Input),
        await applicant.get(`/workflows/${UNKNOWN_ID}`),
        await applicant.delete(`/workflows/${UNKNOWN_ID}`),
        await applicant.post(`/workflows/${UNKNOWN_ID}/validate`),
      ]) {
        expectError(response, 403, "FORBIDDEN");
      }
    });

    it("answers an unknown workflow id with 404 and a malformed one with 400", async function () {
      for (const response of [
        await admin.get(`/workflows/${UNKNOWN_ID}`),
        await admin.put(`/workflows/${UNKNOWN_ID}`, v1Input),
        await admin.delete(`/workflows/${UNKNOWN_ID}`),
        await admin.post(`/workflows/${UNKNOWN_ID}/validate`),
      ]) {
        expectError(response, 404, "NOT_FOUND");
      }
      expectError(await admin.get("/workflows/not-a-uuid"), 400);
    });
  });

  describe("lifecycle of a workflow type", function () {
    it("creates version 1 (201), registered on chain, audited", async function () {
      const before = await registrations();
      const response = await admin.post("/workflows", v1Input);
      expect(response.status).to.equal(201);
      v1 = response.body;
      expect(v1).to.have.keys(
        "workflowId",
        "workflowType",
        "name",
        "description",
        "version",
        "isActive",
        "stages",
        "createdAt",
        "updatedAt",
      );
      expect(v1).to.include({
        workflowType: TYPE,
        name: "Resort licence",
        description: "Version 1",
        version: 1,
        isActive: true,
      });
      expect(v1.createdAt).to.equal(v1.updatedAt);
      expect(v1.stages.map((s: Json) => s.stageName)).to.deep.equal(["Intake v1", "Legacy check"]);
      expect(v1.stages[0].requiredApprovals).to.deep.equal([
        { departmentCode: PLAN, departmentName: PLAN, requiredDocuments: ["SITE_PLAN"], isMandatory: true },
      ]);
      expect(v1.stages[1]).to.include({ timeoutDays: 10, onTimeout: "ESCALATE" });
      expect(await registrations()).to.equal(before + 1);

      const chainId = await chainIdOf(v1.workflowId);
      const record = await onChain(chainId);
      const { rows } = await driver.core.pool.query(`SELECT definition_hash FROM workflows WHERE id = $1`, [
        v1.workflowId,
      ]);
      expect(record.workflowType).to.equal(b32(TYPE));
      expect(record.definitionHash).to.equal(rows[0].definition_hash);
      expect(record.version).to.equal(1n);
      expect(record.stageCount).to.equal(2n);
      expect(record.active).to.equal(true);
      expect(await activeOnChain()).to.equal(chainId);

      const audits = await auditOf(v1.workflowId);
      expect(audits.map((a) => [a.action, a.actor_type])).to.deep.equal([["CREATE", "ADMIN"]]);
      expect(audits[0].tx_hash).to.match(/^0x[0-9a-f]{64}$/);
      expect(audits[0].new_value).to.include({ workflowType: TYPE, stageCount: 2 });
    });

    it("refuses a second POST for a type with an active workflow (409 CONFLICT: use PUT)", async function () {
      const before = await registrations();
      const response = await admin.post("/workflows", { ...v1Input, name: "Another" });
      expectError(response, 409, "CONFLICT");
      expect(response.body.details).to.include({
        workflowType: TYPE,
        activeWorkflowId: v1.workflowId,
        activeVersion: 1,
      });
      expect(await registrations()).to.equal(before);
    });

    it("gets and lists it, filtered by isActive", async function () {
      const got = await admin.get(`/workflows/${v1.workflowId}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(v1);
      const active = (await admin.get("/workflows?isActive=true")).body.workflows;
      expect(active.map((w: Json) => w.workflowId)).to.include(v1.workflowId);
      expect(active.every((w: Json) => w.isActive)).to.equal(true);
      const inactive = (await admin.get("/workflows?isActive=false")).body.workflows;
      expect(inactive.map((w: Json) => w.workflowId)).to.not.include(v1.workflowId);
      expect((await admin.get("/workflows")).body.workflows.map((w: Json) => w.workflowId)).to.include(v1.workflowId);
      expectError(await admin.get("/workflows?isActive=maybe"), 400);
    });

    it("validates the stored definition: valid now", async function () {
      const response = await admin.post(`/workflows/${v1.workflowId}/validate`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ isValid: true, errors: [] });
    });

    it("pins a request created now to version 1", async function () {
      const created = await applicant.post("/requests", { applicantId, requestType: TYPE });
      expect(created.status).to.equal(201);
      requestOnV1 = created.body.requestId;
      expect(await pinnedWorkflow(requestOnV1)).to.equal(await chainIdOf(v1.workflowId));
    });

    it("PUT refuses a different type (400) and an invalid definition (400 INVALID_WORKFLOW), sending nothing", async function () {
      const before = await registrations();
      const mismatch = await admin.put(`/workflows/${v1.workflowId}`, { ...v2Input, workflowType: "BUILDING_PERMIT" });
      expectError(mismatch, 400, "WORKFLOW_TYPE_MISMATCH");
      const invalid = await admin.put(`/workflows/${v1.workflowId}`, {
        ...v2Input,
        stages: [{ ...v2Input.stages[1], stageOrder: 3 }],
      });
      expectError(invalid, 400, "INVALID_WORKFLOW");
      expect(invalid.body.details.errors.map((e: Json) => [e.code, e.path])).to.deep.equal([
        ["NON_CONTIGUOUS_STAGE_ORDER", "stages[0].stageOrder"],
      ]);
      expect(await registrations()).to.equal(before);
    });

    it("PUT creates version 2, active; version 1 becomes inactive", async function () {
      const response = await admin.put(`/workflows/${v1.workflowId}`, v2Input);
      expect(response.status).to.equal(200);
      v2 = response.body;
      expect(v2.workflowId).to.not.equal(v1.workflowId);
      expect(v2).to.include({ workflowType: TYPE, name: v2Input.name, description: "", version: 2, isActive: true });
      // Stored in stage order.
      expect(v2.stages.map((s: Json) => s.stageId)).to.deep.equal(["intake", "health"]);
      expect(v2.stages[1]).to.include({ completionCriteria: "THRESHOLD", threshold: 1, onRejection: "RETRY_STAGE" });

      const old = (await admin.get(`/workflows/${v1.workflowId}`)).body;
      expect(old).to.include({ version: 1, isActive: false });
      expect(Date.parse(old.updatedAt)).to.be.at.least(Date.parse(old.createdAt));
      expect((await onChain(await chainIdOf(v1.workflowId))).active).to.equal(false);
      expect(await activeOnChain()).to.equal(await chainIdOf(v2.workflowId));
      const active = (await admin.get("/workflows?isActive=true")).body.workflows.filter(
        (w: Json) => w.workflowType === TYPE,
      );
      expect(active.map((w: Json) => w.workflowId)).to.deep.equal([v2.workflowId]);
      expect((await admin.get("/workflows?isActive=false")).body.workflows.map((w: Json) => w.workflowId)).to.include(
        v1.workflowId,
      );

      const audits = await auditOf(v2.workflowId);
      expect(audits.map((a) => a.action)).to.deep.equal(["NEW_VERSION"]);
      expect(audits[0].old_value).to.deep.equal({ workflowId: v1.workflowId, version: 1, isActive: true });
    });

    it("PUT on a superseded version is refused (409 STALE_WORKFLOW_VERSION)", async function () {
      const response = await admin.put(`/workflows/${v1.workflowId}`, v2Input);
      expectError(response, 409, "STALE_WORKFLOW_VERSION");
      expect(response.body.details).to.include({ version: 1, latestVersion: 2, latestWorkflowId: v2.workflowId });
    });

    it("a request created before the PUT keeps version 1; one created after is pinned to version 2", async function () {
      // Version 1 needs SITE_PLAN only; HEALTH_CERT belongs to version 2.
      const refused = await applicant.upload(
        "POST",
        `/requests/${requestOnV1}/documents`,
        png(`health ${tag}`),
        "health.png",
        { docType: "HEALTH_CERT" },
      );
      expectError(refused, 400, "INVALID_DOCUMENT_TYPE");
      expect(
        (
          await applicant.upload("POST", `/requests/${requestOnV1}/documents`, pdf(`plan v1 ${tag}`), "plan.pdf", {
            docType: "SITE_PLAN",
          })
        ).status,
      ).to.equal(201);
      const submitted = await applicant.post(`/requests/${requestOnV1}/submit`);
      expect(submitted.status).to.equal(200);
      expect(submitted.body.currentStage).to.include({ stageId: "intake", stageName: "Intake v1" });
      expect(submitted.body.pendingDepartments).to.deep.equal([PLAN]);
      expect((await applicant.get(`/requests/${requestOnV1}`)).body.currentStage.stageName).to.equal("Intake v1");
      expect(await pinnedWorkflow(requestOnV1)).to.equal(await chainIdOf(v1.workflowId));

      const later = await applicant.post("/requests", { applicantId, requestType: TYPE });
      expect(later.status).to.equal(201);
      expect(await pinnedWorkflow(later.body.requestId)).to.equal(await chainIdOf(v2.workflowId));
      expect(await pinnedWorkflow(later.body.requestId)).to.not.equal(await pinnedWorkflow(requestOnV1));
      const missing = await applicant.post(`/requests/${later.body.requestId}/submit`);
      expect(missing.status).to.equal(400);
      expect(missing.body.details.missingDocuments).to.deep.equal(["HEALTH_CERT", "SITE_PLAN"]);
    });

    it("DELETE deactivates on chain; new requests of the type get 409 NO_ACTIVE_WORKFLOW; a second DELETE is 409", async function () {
      const response = await admin.delete(`/workflows/${v2.workflowId}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.have.keys(
        "workflowId",
        "workflowType",
        "version",
        "isActive",
        "deactivatedAt",
        "transactionHash",
      );
      expect(response.body).to.include({ workflowId: v2.workflowId, workflowType: TYPE, version: 2, isActive: false });
      const receipt = await driver.core.provider.getTransactionReceipt(response.body.transactionHash);
      expect(receipt?.status).to.equal(1);
      expect((await onChain(await chainIdOf(v2.workflowId))).active).to.equal(false);
      expect(await activeOnChain()).to.equal(0);
      const got = (await admin.get(`/workflows/${v2.workflowId}`)).body;
      expect(got.isActive).to.equal(false);
      expect(got.updatedAt).to.equal(response.body.deactivatedAt);
      const audits = await auditOf(v2.workflowId);
      expect(audits.map((a) => a.action)).to.deep.equal(["NEW_VERSION", "DEACTIVATE"]);
      expect(audits[1]).to.deep.include({
        actor_type: "ADMIN",
        tx_hash: response.body.transactionHash,
        new_value: { isActive: false, version: 2 },
      });

      expectError(await applicant.post("/requests", { applicantId, requestType: TYPE }), 409, "NO_ACTIVE_WORKFLOW");
      expectError(await admin.delete(`/workflows/${v2.workflowId}`), 409, "WORKFLOW_INACTIVE");
      // Requests pinned before keep their version.
      expect((await applicant.get(`/requests/${requestOnV1}`)).body.currentStage.stageName).to.equal("Intake v1");
    });

    it("POST works again after the deactivation: the next version, active", async function () {
      const response = await admin.post("/workflows", { ...v2Input, name: "Resort licence v3" });
      expect(response.status).to.equal(201);
      expect(response.body).to.include({ version: 3, isActive: true });
      expect(await activeOnChain()).to.equal(await chainIdOf(response.body.workflowId));
      const created = await applicant.post("/requests", { applicantId, requestType: TYPE });
      expect(created.status).to.equal(201);
      expect(await pinnedWorkflow(created.body.requestId)).to.equal(await chainIdOf(response.body.workflowId));
    });

    it("validate re-checks a stored definition against the departments as they are now", async function () {
      await setDepartmentActive(LEGACY, false);
      try {
        const response = await admin.post(`/workflows/${v1.workflowId}/validate`);
        expect(response.status).to.equal(200);
        expect(response.body.isValid).to.equal(false);
        expect(response.body.errors).to.deep.equal([
          {
            code: "INACTIVE_DEPARTMENT",
            message: `Department ${LEGACY} is inactive`,
            path: "stages[1].requiredApprovals[0].departmentCode",
          },
        ]);
      } finally {
        await setDepartmentActive(LEGACY, true);
      }
    });
  });

  describe("validation rules", function () {
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
      requiredApprovals: [approval(PLAN)],
      ...extra,
    });
    const definition = (extra: Json = {}) => ({
      workflowType: TYPE,
      name: "Candidate",
      stages: [stage(1), stage(2, { requiredApprovals: [approval(HEALTH)] })],
      ...extra,
    });
    const validate = async (body: Json) => {
      const response = await admin.post("/workflows/validate", body);
      expect(response.status).to.equal(200);
      expect(response.body.isValid).to.equal(response.body.errors.length === 0);
      for (const error of response.body.errors) expect(error).to.have.keys("code", "message", "path");
      return response.body.errors.map((e: Json) => `${e.code} ${e.path}`) as string[];
    };

    it("accepts a valid definition", async function () {
      expect(await validate(definition())).to.deep.equal([]);
    });

    const cases: [string, Json, string[]][] = [
      [
        "UNKNOWN_WORKFLOW_TYPE",
        definition({ workflowType: "FISHING_LICENSE" }),
        ["UNKNOWN_WORKFLOW_TYPE workflowType"],
      ],
      ["NO_STAGES", definition({ stages: [] }), ["NO_STAGES stages"]],
      [
        "TOO_MANY_STAGES",
        definition({ stages: Array.from({ length: 17 }, (_, i) => stage(i + 1)) }),
        ["TOO_MANY_STAGES stages"],
      ],
      [
        "DUPLICATE_STAGE_ORDER",
        definition({ stages: [stage(1), { ...stage(1), stageId: "other" }] }),
        ["DUPLICATE_STAGE_ORDER stages[1].stageOrder"],
      ],
      [
        "NON_CONTIGUOUS_STAGE_ORDER",
        definition({ stages: [stage(1), stage(3)] }),
        ["NON_CONTIGUOUS_STAGE_ORDER stages[1].stageOrder"],
      ],
      [
        "DUPLICATE_STAGE_ID",
        definition({ stages: [stage(1), { ...stage(2), stageId: "s1" }] }),
        ["DUPLICATE_STAGE_ID stages[1].stageId"],
      ],
      [
        "EMPTY_STAGE",
        definition({ stages: [stage(1, { requiredApprovals: [] })] }),
        ["EMPTY_STAGE stages[0].requiredApprovals"],
      ],
      [
        "TOO_MANY_DEPARTMENTS",
        definition({
          stages: [
            stage(1, {
              requiredApprovals: [
                PLAN,
                HEALTH,
                LEGACY,
                ...Array.from({ length: 6 }, (_, i) => `WF_NONE_${"ABCDEF"[i]}_${tag}`),
              ].map((c) => approval(c)),
            }),
          ],
        }),
        [
          "TOO_MANY_DEPARTMENTS stages[0].requiredApprovals",
          ...Array.from(
            { length: 6 },
            (_, i) => `UNKNOWN_DEPARTMENT stages[0].requiredApprovals[${i + 3}].departmentCode`,
          ),
        ],
      ],
      [
        "UNKNOWN_DEPARTMENT",
        definition({ stages: [stage(1, { requiredApprovals: [approval(`WF_NOPE_${tag}`)] })] }),
        ["UNKNOWN_DEPARTMENT stages[0].requiredApprovals[0].departmentCode"],
      ],
      [
        "INACTIVE_DEPARTMENT",
        definition({
          stages: [
            stage(1),
            stage(2, { requiredApprovals: [approval(PLAN, { requiredDocuments: [] }), approval(CLOSED)] }),
          ],
        }),
        ["INACTIVE_DEPARTMENT stages[1].requiredApprovals[1].departmentCode"],
      ],
      [
        "DUPLICATE_DEPARTMENT_IN_STAGE",
        definition({ stages: [stage(1, { requiredApprovals: [approval(PLAN), approval(PLAN)] })] }),
        ["DUPLICATE_DEPARTMENT_IN_STAGE stages[0].requiredApprovals[1].departmentCode"],
      ],
      [
        "THRESHOLD_OUT_OF_RANGE (above the departments)",
        definition({
          stages: [
            stage(1, {
              completionCriteria: "THRESHOLD",
              threshold: 3,
              requiredApprovals: [approval(PLAN, { isMandatory: false }), approval(HEALTH, { isMandatory: false })],
            }),
          ],
        }),
        ["THRESHOLD_OUT_OF_RANGE stages[0].threshold"],
      ],
      [
        "THRESHOLD_OUT_OF_RANGE (missing)",
        definition({
          stages: [
            stage(1, { completionCriteria: "THRESHOLD", requiredApprovals: [approval(PLAN, { isMandatory: false })] }),
          ],
        }),
        ["THRESHOLD_OUT_OF_RANGE stages[0].threshold"],
      ],
      [
        "THRESHOLD_OUT_OF_RANGE (set on ALL)",
        definition({ stages: [stage(1, { threshold: 1 })] }),
        ["THRESHOLD_OUT_OF_RANGE stages[0].threshold"],
      ],
      [
        "UNKNOWN_DOCUMENT_TYPE",
        definition({
          stages: [
            stage(1, { requiredApprovals: [approval(PLAN, { requiredDocuments: ["SITE_PLAN", "site plan"] })] }),
          ],
        }),
        ["UNKNOWN_DOCUMENT_TYPE stages[0].requiredApprovals[0].requiredDocuments[1]"],
      ],
      [
        "TOO_MANY_DOCUMENT_TYPES",
        definition({
          stages: [
            stage(1, {
              requiredApprovals: [
                approval(PLAN, { requiredDocuments: Array.from({ length: 17 }, (_, i) => `DOC_${i}`) }),
              ],
            }),
          ],
        }),
        ["TOO_MANY_DOCUMENT_TYPES stages"],
      ],
      [
        "CONTRADICTORY_SETTINGS (onTimeout without timeoutDays)",
        definition({ stages: [stage(1, { onTimeout: "AUTO_REJECT" })] }),
        ["CONTRADICTORY_SETTINGS stages[0].onTimeout"],
      ],
      [
        "CONTRADICTORY_SETTINGS (ALL with an optional department)",
        definition({ stages: [stage(1, { requiredApprovals: [approval(PLAN, { isMandatory: false })] })] }),
        ["CONTRADICTORY_SETTINGS stages[0].requiredApprovals[0].isMandatory"],
      ],
      [
        "CONTRADICTORY_SETTINGS (threshold below the mandatory departments)",
        definition({
          stages: [
            stage(1, {
              completionCriteria: "THRESHOLD",
              threshold: 1,
              requiredApprovals: [approval(PLAN), approval(HEALTH)],
            }),
          ],
        }),
        ["CONTRADICTORY_SETTINGS stages[0].threshold"],
      ],
      [
        "CONTRADICTORY_SETTINGS (ANY with several mandatory departments)",
        definition({
          stages: [stage(1, { completionCriteria: "ANY", requiredApprovals: [approval(PLAN), approval(HEALTH)] })],
        }),
        ["CONTRADICTORY_SETTINGS stages[0].completionCriteria"],
      ],
    ];
    for (const [label, body, expected] of cases) {
      it(`reports ${label}`, async function () {
        expect(await validate(body)).to.deep.equal(expected);
      });
    }

    it("reports every problem at once", async function () {
      const errors = await validate(
        definition({
          workflowType: "X",
          stages: [
            stage(1, { requiredApprovals: [approval(`WF_NOPE_${tag}`), approval(`WF_NOPE_${tag}`)] }),
            { ...stage(1), stageId: "s9" },
          ],
        }),
      );
      expect(errors).to.deep.equal([
        "UNKNOWN_WORKFLOW_TYPE workflowType",
        "DUPLICATE_STAGE_ORDER stages[1].stageOrder",
        "UNKNOWN_DEPARTMENT stages[0].requiredApprovals[0].departmentCode",
        "DUPLICATE_DEPARTMENT_IN_STAGE stages[0].requiredApprovals[1].departmentCode",
      ]);
    });

    it("POST with an invalid definition: 400 INVALID_WORKFLOW with the same errors, nothing sent to the chain", async function () {
      const body = definition({ stages: [stage(1, { requiredApprovals: [approval(CLOSED)] }), stage(3)] });
      const expected = (await admin.post("/workflows/validate", body)).body.errors;
      const before = await registrations();
      const workflowsBefore = (await driver.core.pool.query(`SELECT count(*)::int AS n FROM workflows`)).rows[0].n;
      const response = await admin.post("/workflows", body);
      expectError(response, 400, "INVALID_WORKFLOW");
      expect(response.body.details.errors).to.deep.equal(expected);
      expect(expected.map((e: Json) => e.code)).to.deep.equal(["NON_CONTIGUOUS_STAGE_ORDER", "INACTIVE_DEPARTMENT"]);
      expect(await registrations()).to.equal(before);
      expect((await driver.core.pool.query(`SELECT count(*)::int AS n FROM workflows`)).rows[0].n).to.equal(
        workflowsBefore,
      );
    });

    it("refuses a malformed body with 400 VALIDATION_ERROR", async function () {
      const response = await admin.post("/workflows", { workflowType: TYPE, name: "", stages: [{ stageId: "s1" }] });
      expectError(response, 400, "VALIDATION_ERROR");
    });
  });
});
