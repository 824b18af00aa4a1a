/**
 * `npm run demo`: one licence from start to finish against a running `npm start`, through the public API only.
 * Registers two departments and a two-stage workflow, then: an applicant creates a request (its token is minted),
 * uploads a document (its hash anchored), submits; the first department asks for changes; the applicant uploads a
 * new version and resubmits; both departments approve (the fire department holds its own key: it signs its
 * decision, the platform only relays it); the licence is issued; the applicant proves it is theirs. Each step
 * prints its transaction hash; the end prints the verification URL and the QR code in the terminal, then submits a
 * second request for the planning department and prints a reviewer's invitation to the review console.
 *
 * Settings: API_URL (default: the URL of the stack running on DATA_DIR, as its supervisor recorded it, so a moved
 * PORT is followed; else http://127.0.0.1:PORT), DATA_DIR (to find the embedded admin client), or
 * ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET; DEMO_TYPE (default RESORT_LICENSE).
 */
import { createHash, randomBytes } from "node:crypto";
import { Wallet } from "ethers";
import { loadConfig } from "../api/src/config.ts";
import { DECISION_TYPES, DEPARTMENT_KEY_TYPES } from "../abis/index.ts";
import { developmentSecret } from "../api/src/developmentSecrets.ts";
import { qrTerminal } from "../api/src/domain/verification/qrImage.ts";
import { runningStack } from "./stack/stackLock.ts";

const config = loadConfig();
const running = process.env.API_URL ? undefined : await runningStack(config.dataDir);
const base = (process.env.API_URL ?? running?.url ?? `http://127.0.0.1:${config.port}`).replace(/\/$/, "");
const api = `${base}/api/v1`;
const requestType = process.env.DEMO_TYPE ?? "RESORT_LICENSE";

// Before anything else (and before reading DATA_DIR's secrets): is the platform there at all?
const health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5_000) }).then(
  async (r) => ({
    status: r.status,
    body: (await r.json().catch(() => undefined)) as { checks?: unknown; notReady?: string[] } | undefined,
  }),
  (error: Error) => ({ status: 0, body: undefined, error }),
);
if (!health.body?.checks) {
  console.error(
    `No licence approval API answers at ${base}${health.status ? ` (HTTP ${health.status} from something else)` : ""}.\n` +
      (running ? "" : `No platform is running on ${config.dataDir} either.\n`) +
      "Start it with `npm start` (same DATA_DIR), or point the demo at it: API_URL=http://host:port npm run demo",
  );
  process.exit(1);
}
if (health.status !== 200)
  console.log(
    `The platform answers at ${base} but is not ready yet (${health.body.notReady?.join(", ")}); continuing.`,
  );
const clientId =
  config.adminClientId ?? `admin-${(await developmentSecret(config.dataDir, "admin-client-id", 6)).slice(2)}`;
const clientSecret =
  config.adminClientSecret ?? (await developmentSecret(config.dataDir, "admin-client-secret", 24)).slice(2);
const run = randomBytes(3)
  .toString("hex")
  .toUpperCase()
  .replace(/\d/g, (d) => "GHIJKLMNOP"[Number(d)]);

type Json = Record<string, any>;
let stepNumber = 0;
function step(text: string, transactionHash?: string) {
  stepNumber++;
  console.log(`${String(stepNumber).padStart(2)}. ${text}${transactionHash ? `\n    tx ${transactionHash}` : ""}`);
}

async function call(
  method: string,
  route: string,
  options: {
    token?: string;
    headers?: Record<string, string>;
    json?: unknown;
    form?: FormData;
    expect?: number[];
  } = {},
): Promise<Json> {
  const response = await fetch(`${api}${route}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.json !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    body: options.form ?? (options.json !== undefined ? JSON.stringify(options.json) : undefined),
  });
  const text = await response.text();
  const body = text ? (JSON.parse(text) as Json) : {};
  if (!(options.expect ?? [200, 201]).includes(response.status))
    throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 500)}`);
  return { ...body, _status: response.status };
}

/** A small valid one-page PDF (the API checks the type by its bytes and opens it to scan it). */
const pdf = (text: string) =>
  Buffer.from(
    `%PDF-1.4\n% ${text}\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n`,
  );
const upload = (file: Buffer, name: string, fields: Record<string, string> = {}) => {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set("file", new Blob([new Uint8Array(file)], { type: "application/pdf" }), name);
  return form;
};

console.log(`Licence approval demo against ${api}\n`);
const token = await fetch(`${api}/auth/token`, {
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams({
    grant_type: "client_credentials",
    client_id: clientId,
    client_secret: clientSecret,
    scope: "admin",
  }),
}).then((r) => r.json() as Promise<Json>);
if (!token.access_token)
  throw new Error(`admin sign-in failed (${JSON.stringify(token)}): set ADMIN_CLIENT_ID and ADMIN_CLIENT_SECRET`);
const admin = token.access_token as string;
step(`Administrator signed in (client ${clientId})`);

const departments: Record<string, { code: string; apiKey: string }> = {};
// The fire department holds its own key (any wallet would do; here one made on the spot): the platform never sees it.
const fireKey = Wallet.createRandom();
/** The fire department's key signs its DepartmentKey proof (EIP-712, in the approval registry's domain). */
async function fireKeyProof(code: string): Promise<string> {
  const typed = await call("POST", "/departments/key-proof-typed-data", {
    token: admin,
    json: { code, custody: "DEPARTMENT_HELD", walletAddress: fireKey.address },
  });
  return fireKey.signTypedData(typed.domain, DEPARTMENT_KEY_TYPES, typed.message);
}
for (const [key, name] of [
  ["PLANNING", "Planning Department"],
  ["FIRE", "Fire Safety Department"],
] as const) {
  const code = `DEMO_${key}_${run}`;
  // Governance registers a wallet only with its proof that it holds its key: the fire department's key signs the
  // DepartmentKey typed data the API hands out (the platform signs for the wallets it holds itself).
  const custody =
    key === "FIRE"
      ? {
          custody: "DEPARTMENT_HELD",
          walletAddress: fireKey.address,
          keyProof: await fireKeyProof(code),
        }
      : {};
  const created = await call("POST", "/departments", { token: admin, json: { code, name, ...custody } });
  departments[key] = { code, apiKey: created.apiKey };
  step(
    key === "FIRE"
      ? `Department ${code} registered on chain with the address of a key it holds itself (${created.walletAddress}, custody ${created.custody})`
      : `Department ${code} registered on chain with a custodial wallet ${created.walletAddress} (custody ${created.custody})`,
    created.transactionHash,
  );
}
const asDepartment = (key: string) => ({
  "x-api-key": departments[key].apiKey,
  "x-department-code": departments[key].code,
});

const definition = {
  workflowType: requestType,
  name: `Demo workflow ${run}`,
  description: "Planning reviews the site plan, then fire safety checks it.",
  stages: [
    {
      stageId: "planning",
      stageName: "Planning review",
      stageOrder: 1,
      executionType: "SEQUENTIAL",
      requiredApprovals: [
        { departmentCode: departments.PLANNING.code, requiredDocuments: ["SITE_PLAN"], isMandatory: true },
      ],
    },
    {
      stageId: "fire",
      stageName: "Fire safety",
      stageOrder: 2,
      executionType: "SEQUENTIAL",
      requiredApprovals: [
        { departmentCode: departments.FIRE.code, requiredDocuments: ["SITE_PLAN"], isMandatory: true },
      ],
    },
  ],
};
// A type that already has an active workflow gets a new version (requests in progress keep theirs).
const existing = ((await call("GET", "/workflows", { token: admin })).workflows as Json[]).find(
  (w) => w.workflowType === requestType && w.isActive,
);
const workflow = existing
  ? await call("PUT", `/workflows/${existing.workflowId}`, { token: admin, json: definition })
  : await call("POST", "/workflows", { token: admin, json: definition });
// The workflow answer is the spec's Workflow (no hash): its registration is the newest in the transaction log.
const registration = (
  await call("GET", "/admin/blockchain/transactions?txType=REGISTER_WORKFLOW&limit=1", { token: admin })
).transactions[0];
step(
  `Two-stage workflow for ${requestType} registered on chain (version ${workflow.version})`,
  registration?.transactionHash,
);

const applicantId = `demo-applicant-${run.toLowerCase()}`;
const login = await fetch(
  `${api}/auth/identitylocker/authorize?${new URLSearchParams({ client_id: "demo", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", redirect_uri: "http://127.0.0.1:9/callback", state: run, login_hint: applicantId, name: "Dana Demo" })}`,
  { redirect: "manual" },
);
const code = new URL(login.headers.get("location") ?? "http://x/?").searchParams.get("code");
if (!code)
  throw new Error(
    "applicant sign-in failed: the identity locker did not return a code (is a real identity provider configured?)",
  );
const applicant = (
  await call("POST", "/auth/identitylocker/token", {
    json: {
      code,
      client_id: "demo",
      code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
      redirect_uri: "http://127.0.0.1:9/callback",
    },
  })
).access_token as string;
step(`Applicant ${applicantId} signed in through the identity locker`);

const created = await call("POST", "/requests", {
  token: applicant,
  json: { applicantId, requestType, metadata: { premises: "12 Harbour Road" } },
});
const requestId = created.requestId as string;
step(`Request ${created.requestNumber} created: its soulbound licence token is minted`, created.transactionHash);

const plan = pdf(`site plan ${run}`);
const document = await call("POST", `/requests/${requestId}/documents`, {
  token: applicant,
  form: upload(plan, "site-plan.pdf", { docType: "SITE_PLAN" }),
});
step(
  `Site plan uploaded; its SHA-256 ${createHash("sha256").update(plan).digest("hex").slice(0, 16)}… is anchored on chain`,
  document.transactionHash,
);

const submitted = await call("POST", `/requests/${requestId}/submit`, { token: applicant });
step(`Request submitted: pending with ${submitted.pendingDepartments.join(", ")}`, submitted.transactionHash);

const changes = await call("POST", `/requests/${requestId}/request-changes`, {
  headers: asDepartment("PLANNING"),
  json: { remarks: "Please show the emergency exits on the site plan.", requiredDocuments: ["SITE_PLAN"] },
});
step(`${departments.PLANNING.code} asks for changes: the request waits for the applicant`, changes.transactionHash);

const plan2 = pdf(`site plan with exits ${run}`);
const version2 = await call("PUT", `/requests/${requestId}/documents/${document.documentId}`, {
  token: applicant,
  form: upload(plan2, "site-plan-v2.pdf"),
});
step(`Site plan version ${version2.newVersion} uploaded and anchored`, version2.transactionHash);

const resubmitted = await call("POST", `/requests/${requestId}/submit`, { token: applicant });
step("Request resubmitted", resubmitted.transactionHash);

const first = await call("POST", `/requests/${requestId}/approve`, {
  headers: asDepartment("PLANNING"),
  json: { remarks: "Exits shown; zoning complies.", reviewedDocuments: [document.documentId] },
});
step(`${departments.PLANNING.code} approves from its own wallet: stage 1 complete`, first.transactionHash);
const fireDecision = { remarks: "Fire exits adequate.", reviewedDocuments: [document.documentId] };
const toSign = await call("POST", `/requests/${requestId}/decision-typed-data`, {
  headers: asDepartment("FIRE"),
  json: { decision: "APPROVED", ...fireDecision },
});
const signature = await fireKey.signTypedData(toSign.typedData.domain, DECISION_TYPES, toSign.typedData.message);
step(
  `${departments.FIRE.code} signs its approval of site plan version ${toSign.documentVersions[document.documentId]} with its own key (EIP-712, nonce ${toSign.nonce})`,
);
const second = await call("POST", `/requests/${requestId}/approve`, {
  headers: asDepartment("FIRE"),
  json: {
    ...fireDecision,
    signature,
    nonce: toSign.nonce,
    deadline: toSign.deadline,
    stage: toSign.stage,
    round: toSign.round,
  },
});
step(
  `The platform relays the signed approval; the chain checks it is ${fireKey.address}'s: the licence is issued`,
  second.transactionHash,
);

const detail = await call("GET", `/requests/${requestId}`, { token: applicant });
const verification = await call("GET", `/verify/${detail.tokenId}`);
step(`Public verification of token ${detail.tokenId}: ${verification.verdict} — ${verification.message}`);
const proof = await call("GET", `/requests/${requestId}/identity-proof`, { token: applicant });
const holder = await call("POST", `/verify/holder/${detail.tokenId}`, {
  json: { applicantId: proof.applicantId, salt: proof.salt },
});
step(
  `The applicant proves the licence is theirs (id + salt against the commitment minted on chain): ${holder.matches ? "matches" : "does NOT match"}`,
);
const qr = await call("GET", `/requests/${requestId}/qr?format=json`, { token: applicant });

console.log(
  `\nVerify it yourself:\n  ${base}/verify?token=${detail.tokenId}\n  ${api}/verify/${detail.tokenId}\n\nOr scan this QR code (it opens ${qr.url.slice(0, 60)}…):\n`,
);
console.log(await qrTerminal(qr.url));

// A second request waits for the planning department, whose reviewers decide it in the review console.
const waiting = await call("POST", "/requests", {
  token: applicant,
  json: { applicantId, requestType, metadata: { premises: "14 Harbour Road" } },
});
await call("POST", `/requests/${waiting.requestId}/documents`, {
  token: applicant,
  form: upload(pdf(`site plan ${run} (14 Harbour Road)`), "site-plan.pdf", { docType: "SITE_PLAN" }),
});
await call("POST", `/requests/${waiting.requestId}/submit`, { token: applicant });
const invitation = await call("POST", `/departments/${departments.PLANNING.code}/reviewer-invitations`, {
  headers: asDepartment("PLANNING"),
  json: { name: "Demo reviewer" },
});
console.log(
  [
    `Review in the browser: request ${waiting.requestNumber} waits for ${departments.PLANNING.code}.`,
    `  1. Open this one-time invitation in a browser on this machine (valid until ${invitation.expiresAt}) and`,
    `     register a passkey (Touch ID, Windows Hello, a security key or a phone):`,
    `     ${invitation.invitationUrl}`,
    `  2. Later, sign in with that passkey at ${new URL("/console/", invitation.invitationUrl)}`,
    `  The README's "Review in the browser" says how a department moves its decisions to its reviewers' passkeys.`,
  ].join("\n"),
);
