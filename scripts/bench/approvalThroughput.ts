/**
 * Approvals from several departments at once: each department decides from its own custodial wallet, so more
 * departments means more independent nonce lanes. One PARALLEL stage of 8 departments; for each number of
 * departments asked (1 and 8 by default), each approves the same number of fresh requests (4 in flight per
 * department), with the CPU the stack used for it.
 */
import { runConcurrently, say, type BenchEnvironment, type Json } from "./benchEnvironment.ts";
import { measureCpu, type CpuUsage } from "./processCpu.ts";

export interface ApprovalResult {
  departments: number;
  approvals: number;
  perSecond: number;
  cpu: CpuUsage;
}

export interface ApprovalOptions {
  /** Numbers of departments approving at once, one round each. */
  rounds?: number[];
  /** Requests in flight per department. */
  inFlight?: number;
  /** Clients creating and submitting the requests of a round (not measured). */
  creators?: number;
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
    const created = await env.request("POST", "/departments", env.adminToken, {
      code,
      name: `Bench department ${i + 1}`,
    });
    if (created.status !== 201) throw new Error(`department: ${created.status} ${JSON.stringify(created.body)}`);
    keys.push({ code, apiKey: created.body.apiKey });
  }
  for (const workflowType of ["BUILDING_PERMIT", "TRADE_LICENSE", "RESORT_LICENSE"]) {
    const definition =
      workflowType === "BUILDING_PERMIT"
        ? {
            stageId: "all",
            stageName: "Joint review",
            stageOrder: 1,
            executionType: "PARALLEL",
            completionCriteria: "ALL",
            requiredApprovals: keys.map((k) => ({ departmentCode: k.code, requiredDocuments: [], isMandatory: true })),
          }
        : {
            stageId: "one",
            stageName: "Review",
            stageOrder: 1,
            executionType: "SEQUENTIAL",
            completionCriteria: "ALL",
            requiredApprovals: [{ departmentCode: keys[0].code, requiredDocuments: [], isMandatory: true }],
          };
    const workflow = await env.request("POST", "/workflows", env.adminToken, {
      workflowType,
      name: `Bench ${workflowType}`,
      stages: [definition],
    });
    if (workflow.status !== 201) throw new Error(`workflow: ${workflow.status} ${JSON.stringify(workflow.body)}`);
  }
  return keys;
}

export async function measureApprovalThroughput(
  env: BenchEnvironment,
  keys: DepartmentKey[],
  perDepartment: number,
  options: ApprovalOptions = {},
): Promise<ApprovalResult[]> {
  const { rounds = [1, 8], inFlight = 4, creators = 8 } = options;
  const results: ApprovalResult[] = [];
  for (const departments of rounds) {
    // Fresh submitted requests for this round (not measured).
    const requests: string[] = [];
    await runConcurrently(perDepartment, creators, async () => {
      const created = await env.request("POST", "/requests", env.applicantToken, {
        applicantId: env.applicantId,
        requestType: "BUILDING_PERMIT",
      });
      const submitted = await env.request("POST", `/requests/${created.body.requestId}/submit`, env.applicantToken, {});
      if (submitted.status !== 200) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
      requests.push(created.body.requestId);
    });
    const work = keys.slice(0, departments).flatMap((key) => requests.map((id) => ({ key, id })));
    // Each department works through its own list with `inFlight` requests in flight.
    const { result: elapsed, cpu } = await measureCpu(env.meter, async () => {
      const started = performance.now();
      await Promise.all(
        keys.slice(0, departments).map((key) =>
          runConcurrently(requests.length, inFlight, async (i) => {
            const answer = await env.request(
              "POST",
              `/requests/${requests[i]}/approve`,
              undefined,
              { remarks: "ok", reviewedDocuments: [] },
              { "x-api-key": key.apiKey, "x-department-code": key.code },
            );
            if (answer.status !== 200)
              throw new Error(`approve: ${answer.status} ${JSON.stringify(answer.body as Json)}`);
          }),
        ),
      );
      return performance.now() - started;
    });
    const perSecond = work.length / (elapsed / 1000);
    results.push({ departments, approvals: work.length, perSecond, cpu });
    say(
      `approvals (${env.mode}), ${departments} department(s) in parallel: ${perSecond.toFixed(1)} approvals/s (${work.length}), ${(cpu.stackMs / work.length).toFixed(1)} CPU-ms per approval`,
    );
  }
  return results;
}
