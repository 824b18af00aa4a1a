/**
 * `npm run bench:webhooks`: how long after a write its webhook arrives. Starts its own stack (fresh data directory,
 * free ports, jobs in the API process), registers a department, a one-stage workflow and a webhook pointing at a
 * receiver on 127.0.0.1, then submits requests over HTTP one at a time and measures, for each APPROVAL_REQUIRED:
 *   - submit returned → webhook received (what follows the write: derive job, index wait, delivery job, signed POST);
 *   - submit sent → webhook received.
 * Then the same with 8 submissions at a time. Results go to docs/benchmarks.md (section "webhooks").
 */
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { machineLine, writeBenchmarkSection } from "./lib/benchmarkReport.ts";
import { benchStackEnv } from "./bench/benchStackEnv.ts";
import { startStack } from "./stack/stack.ts";
import { adminSignIn } from "./bench/adminSignIn.ts";
import { developmentSignIn } from "./bench/developmentSignIn.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-webhooks-"));
const env = await benchStackEnv(dataDir);

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

console.log(`Starting a stack in ${dataDir}…`);
const stack = await startStack({ env, log: () => {} });
const api = `${stack.api.url}/api/v1`;
const post = async (route: string, token: string, body: unknown) => {
  const response = await fetch(`${api}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, any>;
  if (response.status >= 300) throw new Error(`${route}: ${response.status} ${JSON.stringify(json)}`);
  return json;
};
const admin = await adminSignIn(api, stack.admin);
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
const applicant = await developmentSignIn(api, "bench");

interface Sample {
  afterReturn: number;
  fromSend: number;
}
async function one(): Promise<Sample> {
  const { requestId } = await post("/requests", applicant, { applicantId: "bench", requestType: "TRADE_LICENSE" });
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

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const results: Record<number, Sample[]> = {};
try {
  for (const concurrency of [1, 8]) {
    const samples: Sample[] = [];
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        next++;
        samples.push(await one());
        if (samples.length % 20 === 0)
          process.stdout.write(`  concurrency ${concurrency}: ${samples.length}/${REQUESTS}\r`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    results[concurrency] = samples;
    console.log(`  concurrency ${concurrency}: ${REQUESTS} submissions, each webhook received            `);
  }
} finally {
  await stack.stop();
  receiver.close();
  await rm(dataDir, { recursive: true, force: true });
}

const cell = (samples: Sample[], key: keyof Sample) =>
  `${percentile(
    samples.map((s) => s[key]),
    50,
  ).toFixed(0)} / ${percentile(
    samples.map((s) => s[key]),
    95,
  ).toFixed(0)}`;
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
