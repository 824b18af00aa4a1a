/**
 * `npm run bench:webhooks`: how long after a write its webhook arrives. Starts its own stack (fresh data directory,
 * free ports, jobs in the API process), registers a department, a one-stage workflow and a webhook pointing at a
 * receiver on 127.0.0.1, then submits requests over HTTP one at a time and measures, for each APPROVAL_REQUIRED:
 *   - submit returned → webhook received (what follows the write: derive job, index wait, delivery job, signed POST);
 *   - submit sent → webhook received.
 * Then the same with 8 submissions at a time. Results go to docs/benchmarks.md (section "webhooks").
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";
import { percentile, runConcurrently, startBenchEnvironment } from "./bench/benchEnvironment.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);

// The receiver: resolves the waiter of each request id as its webhook arrives.
const arrivals = new Map<string, (at: number) => void>();
const receiver = http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const at = performance.now();
    res.writeHead(200).end();
    const payload = JSON.parse(body) as { requestId?: string; type?: string };
    if (payload.type === "APPROVAL_REQUIRED" && payload.requestId) arrivals.get(payload.requestId)?.(at);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

console.log("Starting a stack…");
const env = await startBenchEnvironment("automine");
const post = async (route: string, token: string, body: unknown) => {
  const answer = await env.request("POST", route, token, body);
  if (answer.status >= 300) throw new Error(`${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};
const admin = env.adminToken;
await post("/departments", admin, { code: "BENCH_HOOKS", name: "Webhook bench" });
await post("/workflows", admin, {
  workflowType: "TRADE_LICENSE",
  name: "Webhook bench",
  stages: [
    {
      stageId: "s",
      stageName: "Review",
      stageOrder: 1,
      executionType: "SEQUENTIAL",
      requiredApprovals: [{ departmentCode: "BENCH_HOOKS", requiredDocuments: [], isMandatory: true }],
    },
  ],
});
await post("/webhooks", admin, {
  departmentCode: "BENCH_HOOKS",
  url: receiverUrl,
  events: ["APPROVAL_REQUIRED"],
  secret: "bench-secret-0123456789",
});
const applicant = env.applicantToken;

interface Sample {
  afterReturn: number;
  fromSend: number;
}
async function one(): Promise<Sample> {
  const { requestId } = await post("/requests", applicant, {
    applicantId: env.applicantId,
    requestType: "TRADE_LICENSE",
  });
  const arrived = new Promise<number>((resolve) => arrivals.set(requestId, resolve));
  const sent = performance.now();
  await post(`/requests/${requestId}/submit`, applicant, {});
  const returned = performance.now();
  const at = await Promise.race([
    arrived,
    new Promise<number>((_, reject) =>
      setTimeout(() => reject(new Error(`no webhook for ${requestId} in 30 s`)), 30_000),
    ),
  ]);
  arrivals.delete(requestId);
  return { afterReturn: at - returned, fromSend: at - sent };
}

const results: Record<number, Sample[]> = {};
try {
  for (const concurrency of [1, 8]) {
    results[concurrency] = [];
    await runConcurrently(REQUESTS, concurrency, async () => void results[concurrency].push(await one()));
    console.log(`  concurrency ${concurrency}: ${REQUESTS} submissions, each webhook received`);
  }
} finally {
  await env.close();
  receiver.close();
}

const cell = (samples: Sample[], key: keyof Sample) =>
  [50, 95]
    .map((p) =>
      percentile(
        samples.map((s) => s[key]),
        p,
      ).toFixed(0),
    )
    .join(" / ");
const table = [
  "| Submissions over HTTP | submit returned → webhook received, p50 / p95 (ms) | submit sent → webhook received, p50 / p95 (ms) |",
  "|---|---|---|",
  `| ${REQUESTS}, one at a time | ${cell(results[1], "afterReturn")} | ${cell(results[1], "fromSend")} |`,
  `| ${REQUESTS}, 8 at a time | ${cell(results[8], "afterReturn")} | ${cell(results[8], "fromSend")} |`,
].join("\n");
console.log(`\n${table}`);
await writeBenchmarkSection(
  "webhooks",
  [
    "## Webhook latency (`npm run bench:webhooks`)",
    "",
    `${machineLine()}. Own stack (embedded Postgres, anvil, Ponder, one API process running the jobs with the default JOB_POLL_MS=1000),`,
    "one department with one webhook on a receiver at 127.0.0.1; each request is created, then submitted over HTTP, and the",
    "APPROVAL_REQUIRED delivery for it is timed at the receiver. After the submit returns, the path is: the",
    "derive-events job (woken by NOTIFY), a wait for the index to show the block, the event and delivery rows, the",
    "deliver-webhook job (woken by NOTIFY), the signed POST.",
    "",
    table,
  ].join("\n"),
);
