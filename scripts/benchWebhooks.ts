/**
 * `npm run bench:webhooks`: how long after a write its webhook arrives. Starts the bench stack (fresh data directory,
 * free ports, jobs in the API process) with `npm run bench`'s departments and workflows, registers a webhook of the
 * department that reviews TRADE_LICENSE pointing at a receiver on 127.0.0.1, then submits requests over HTTP one at
 * a time and measures, for each APPROVAL_REQUIRED:
 *   - submit returned → webhook received (what follows the write: derive job, index wait, delivery job, signed POST);
 *   - submit sent → webhook received.
 * Then the same with 8 submissions at a time. Results go to docs/benchmarks.md (section "webhooks").
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { p50p95, runConcurrently, startBenchEnvironment } from "./bench/benchEnvironment.ts";
import { machineLine, table, writeBenchmarkSection } from "./bench/benchReport.ts";
import { setUpParallelReview } from "./bench/phases.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);

// The receiver: resolves the waiter of each request id as its webhook arrives.
const arrivals = new Map<string, (at: number) => void>();
const receiver = http.createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  const at = performance.now();
  res.writeHead(200).end();
  const payload = JSON.parse(body) as { requestId?: string; type?: string };
  if (payload.type === "APPROVAL_REQUIRED" && payload.requestId) arrivals.get(payload.requestId)?.(at);
});
await once(receiver.listen(0, "127.0.0.1"), "listening");

console.log("Starting a stack…");
const env = await startBenchEnvironment("automine");
const post = async (route: string, body: unknown, token = env.applicantToken) => {
  const answer = await env.request("POST", route, token, body);
  if (answer.status >= 300) throw new Error(`${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};

/** One request created, then submitted: [submit returned → webhook, submit sent → webhook] in ms. */
async function submission(): Promise<[number, number]> {
  const { requestId } = await post("/requests", { applicantId: env.applicantId, requestType: "TRADE_LICENSE" });
  const arrived = new Promise<number>((resolve) => arrivals.set(requestId, resolve));
  const sent = performance.now();
  await post(`/requests/${requestId}/submit`, {});
  const returned = performance.now();
  const timeout = new Promise<number>((_, reject) =>
    setTimeout(() => reject(new Error(`no webhook for ${requestId} in 30 s`)), 30_000),
  );
  const at = await Promise.race([arrived, timeout]);
  arrivals.delete(requestId);
  return [at - returned, at - sent];
}

const results: Record<number, [number, number][]> = {};
try {
  const [reviewer] = await setUpParallelReview(env);
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const webhook = {
    departmentCode: reviewer.code,
    url,
    events: ["APPROVAL_REQUIRED"],
    secret: "bench-secret-0123456789",
  };
  await post("/webhooks", webhook, env.adminToken);
  for (const concurrency of [1, 8]) {
    results[concurrency] = [];
    await runConcurrently(REQUESTS, concurrency, async () => void results[concurrency].push(await submission()));
    console.log(`  concurrency ${concurrency}: ${REQUESTS} submissions, each webhook received`);
  }
} finally {
  await env.close();
  receiver.close();
}

const samples = table(
  [
    "Submissions over HTTP",
    "submit returned → webhook received, p50 / p95 (ms)",
    "submit sent → webhook received, p50 / p95 (ms)",
  ],
  [1, 8].map((c) => [
    `${REQUESTS}, ${c === 1 ? "one" : c} at a time`,
    p50p95(results[c].map((s) => s[0])),
    p50p95(results[c].map((s) => s[1])),
  ]),
).join("\n");
console.log(`\n${samples}`);
await writeBenchmarkSection(
  "webhooks",
  `## Webhook latency (\`npm run bench:webhooks\`)

${machineLine()}. Own stack (embedded Postgres, anvil, Ponder, one API process running the jobs with the default JOB_POLL_MS=1000),
the reviewing department (of \`npm run bench\`'s eight) has one webhook on a receiver at 127.0.0.1; each request is created, then submitted over HTTP, and the
APPROVAL_REQUIRED delivery for it is timed at the receiver. After the submit returns, the path is: the
derive-events job (woken by NOTIFY), a wait for the index to show the block, the event and delivery rows, the
deliver-webhook job (woken by NOTIFY), the signed POST.

${samples}`,
);
