/**
 * Approvals from several departments at once: each department decides from its own custodial wallet, so more
 * departments means more independent nonce lanes. One PARALLEL stage of 8 departments; for 1, 2, 4 and 8
 * departments, each approves the same number of fresh requests (4 in flight per department).
 */
import { runConcurrently, say, type BenchEnvironment, type Json } from "./benchEnvironment.ts";

export interface ApprovalResult {
  departments: number;
  approvals: number;
  perSecond: number;
}

export interface DepartmentKey {
  code: string;
  apiKey: string;
}

/** Eight departments and, for BUILDING_PERMIT, one PARALLEL stage needing all of them. */
export async function setUpParallelReview(env: BenchEnvironment): Promise<DepartmentKey[]> {
  const keys: DepartmentKey[] = [];
  for (let i = 0; i < 8; i++) {
    const code = `BENCH_DEPT_${"ABCDEFGH"[i]}`;
    const created = await env.request("POST", "/departments", env.adminToken, { code, name: `Bench department ${i + 1}` });
    if (created.status !== 201) throw new Error(`department: ${created.status} ${JSON.stringify(created.body)}`);
    keys.push({ code, apiKey: created.body.apiKey });
  }
  for (const workflowType of ["BUILDING_PERMIT", "TRADE_LICENSE", "RESORT_LICENSE"]) {
    const definition = workflowType === "BUILDING_PERMIT"
      ? { stageId: "all", stageName: "Joint review", stageOrder: 1, executionType: "PARALLEL", completionCriteria: "ALL", requiredApprovals: keys.map((k) => ({ departmentCode: k.code, requiredDocuments: [], isMandatory: true })) }
      : { stageId: "one", stageName: "Review", stageOrder: 1, executionType: "SEQUENTIAL", completionCriteria: "ALL", requiredApprovals: [{ departmentCode: keys[0].code, requiredDocuments: [], isMandatory: true }] };
    const workflow = await env.request("POST", "/workflows", env.adminToken, { workflowType, name: `Bench ${workflowType}`, stages: [definition] });
    if (workflow.status !== 201) throw new Error(`workflow: ${workflow.status} ${JSON.stringify(workflow.body)}`);
  }
  return keys;
}

export async function measureApprovalThroughput(env: BenchEnvironment, keys: DepartmentKey[], perDepartment: number): Promise<ApprovalResult[]> {
  const results: ApprovalResult[] = [];
  for (const departments of [1, 2, 4, 8]) {
    // Fresh submitted requests for this round (created and submitted 8 at a time, not measured).
    const requests: string[] = [];
    await runConcurrently(perDepartment, 8, async () => {
      const created = await env.request("POST", "/requests", env.applicantToken, { applicantId: env.applicantId, requestType: "BUILDING_PERMIT" });
      const submitted = await env.request("POST", `/requests/${created.body.requestId}/submit`, env.applicantToken, {});
      if (submitted.status !== 200) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
      requests.push(created.body.requestId);
    });
    const work = keys.slice(0, departments).flatMap((key) => requests.map((id) => ({ key, id })));
    // Each department works through its own list with 4 requests in flight.
    const started = performance.now();
    await Promise.all(
      keys.slice(0, departments).map((key) =>
        runConcurrently(requests.length, 4, async (i) => {
          const answer = await env.request("POST", `/requests/${requests[i]}/approve`, undefined, { remarks: "ok", reviewedDocuments: [] }, { "x-api-key": key.apiKey, "x-department-code": key.code });
          if (answer.status !== 200) throw new Error(`approve: ${answer.status} ${JSON.stringify(answer.body as Json)}`);
        }),
      ),
    );
    const perSecond = work.length / ((performance.now() - started) / 1000);
    results.push({ departments, approvals: work.length, perSecond });
    say(`approvals, ${departments} department(s) in parallel: ${perSecond.toFixed(1)} approvals/s (${work.length})`);
  }
  return results;
}
