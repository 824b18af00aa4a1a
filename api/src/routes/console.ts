/**
 * The review console: its pages and assets at /console, and the reads it needs (queue, history) under /api/v1.
 * The page is static files in api/public/console/ and two libraries served from their npm packages (no CDN, no
 * build step): @simplewebauthn/browser's bundle and pdf.js with its worker. Served, like the verification page,
 * with a strict Content-Security-Policy: scripts, pdf.js's worker and connections to this server only (and the S3
 * bucket's downloads when documents are stored there); images from the downloaded bytes (blob:).
 */
import { readFileSync } from "node:fs";
import { z } from "zod/v4";
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import type { DomainContext } from "../domain/context.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { staticPageRoute } from "./staticPage.ts";
import { consoleQueue, QUEUE_SORTS, QUEUE_STATUSES } from "../reads/consoleQueue.ts";
import { departmentDecisions } from "../reads/departmentDecisions.ts";
import { DateTime, pageQuery, Pagination, RequestType } from "./schemas/common.ts";

/** A department: by its API key, or one of its reviewers signed in to the console. */
const route = routeGroup({
  tags: ["Console"],
  access: [{ kind: "apiKey" }],
  responses: { 400: "Invalid query", 401: "Not authenticated", 403: "Not a department" },
});

/**
 * The page reads documents from their signed download URLs: this server's (/api/v1/files/…), or the S3 bucket's,
 * which must then allow the console's origin (CORS GET).
 */
function contentSecurityPolicy(config: Config): string {
  const downloads = config.storageBackend === "s3" ? ` ${s3Origin(config)}` : "";
  return `default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self'; connect-src 'self'${downloads}; img-src 'self' data: blob:; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

/** Where presigned S3 URLs point: the endpoint (path style) or the bucket's host under it, else AWS's. */
function s3Origin(config: Config): string {
  if (!config.s3Endpoint) return `https://${config.s3Bucket}.s3.${config.s3Region}.amazonaws.com`;
  const endpoint = new URL(config.s3Endpoint);
  return config.s3ForcePathStyle ? endpoint.origin : `${endpoint.protocol}//${config.s3Bucket}.${endpoint.host}`;
}

const QueueStage = z.object({
  index: z.int().describe("The stage's index on chain, from 0"),
  number: z.int().describe("The stage's number, from 1 (its stageOrder)"),
  name: z.string(),
  mode: z.string().describe("SEQUENTIAL | PARALLEL"),
  completion: z.string().describe("ALL | ANY | THRESHOLD"),
  startedAt: DateTime.describe("When the current stage (its current round) started on chain"),
  timeoutDays: z.number().nullable().describe("The stage's timeout; null when it has none"),
  dueAt: DateTime.nullable().describe("startedAt + timeoutDays"),
  onTimeout: z.string().nullable().describe("NOTIFY | ESCALATE | AUTO_REJECT: what the keeper does once due"),
});

const QueueResponse = z
  .object({
    items: z.array(
      z.object({
        requestId: z.uuid(),
        requestNumber: z.string().describe("The licence number once issued (RL-2026-000001)"),
        tokenId: z.int(),
        requestType: z.string(),
        applicantName: z.string(),
        requestStatus: z.string().describe("The request's status (SUBMITTED, PENDING_RESUBMISSION, ...)"),
        status: z.enum(QUEUE_STATUSES).describe("Where the department stands in the request's current stage"),
        submittedAt: DateTime.nullable(),
        stage: QueueStage,
        overdue: z.boolean().describe("Under review and past the stage's dueAt"),
      }),
    ),
    counts: z
      .object({ ...Object.fromEntries(QUEUE_STATUSES.map((s) => [s, z.int()])), overdue: z.int() })
      .describe("Requests per status under the other filters (requestType, olderThanDays), and how many are overdue"),
    pagination: Pagination,
  })
  .meta({ id: "ConsoleQueue" });

const DecisionsResponse = z
  .object({
    decisions: z.array(
      z.object({
        requestId: z.uuid(),
        requestNumber: z.string(),
        requestType: z.string(),
        applicantName: z.string(),
        stage: z.int(),
        decision: z.enum(["APPROVED", "REJECTED", "CHANGES_REQUESTED"]),
        status: z.string().describe("The decision as it stands (REVIEW_REQUIRED once a document update reopened it)"),
        isActive: z.boolean(),
        reason: z.string().nullable(),
        remarks: z.string(),
        signer: z.string().describe("The wallet that signed, as the chain recorded it"),
        custody: z.string().describe("CUSTODIAL | DEPARTMENT_HELD, as registered when it decided"),
        custodyLabel: z.string(),
        reviewers: z
          .array(
            z.object({ reviewerId: z.uuid(), reviewerName: z.string(), passkeyId: z.string(), signedAt: DateTime }),
          )
          .describe("A passkey account's decision: the reviewers whose passkeys signed it"),
        transactionHash: z.string(),
        blockNumber: z.int(),
        decidedAt: DateTime,
        verifyUrl: z.url(),
      }),
    ),
    pagination: Pagination,
  })
  .meta({ id: "ConsoleDecisions" });

/** The page's own files (api/public/console/), each with its type. */
const PAGE_FILES = {
  "/console": ["index.html", "text/html"],
  "/console/app.js": ["app.js", "text/javascript"],
  "/console/api.js": ["api.js", "text/javascript"],
  "/console/views.js": ["views.js", "text/javascript"],
  "/console/documents.js": ["documents.js", "text/javascript"],
  "/console/app.css": ["app.css", "text/css"],
} as const;

/** Libraries served from their npm packages (resolved as Node resolves them, so the installed version is served). */
const VENDOR_FILES = {
  // The UMD bundle: a classic script defining SimpleWebAuthnBrowser (the package exports only its ESM entry).
  "/console/vendor/simplewebauthn-browser.js": () =>
    new URL("../dist/bundle/index.umd.min.js", import.meta.resolve("@simplewebauthn/browser")),
  // ethers' ES module build: the console hashes what it signs (EIP-712) itself.
  "/console/vendor/ethers.min.js": () => new URL("../dist/ethers.min.js", import.meta.resolve("ethers")),
  "/console/vendor/pdf.min.mjs": () => new URL(import.meta.resolve("pdfjs-dist/build/pdf.min.mjs")),
  "/console/vendor/pdf.worker.min.mjs": () => new URL(import.meta.resolve("pdfjs-dist/build/pdf.worker.min.mjs")),
} as const;

export function consoleRoutes(context: DomainContext): { api: RouteDefinition[]; root: RouteDefinition[] } {
  const departmentOf = (principal: Principal | undefined) => principal as Extract<Principal, { kind: "department" }>;
  const baseUrl = context.config.publicBaseUrl!;
  const api: RouteDefinition[] = [
    route.get("/console/queue", "getConsoleQueue", {
      summary: "Your department's open requests with their stage deadlines, overdue first",
      description:
        "Requests routed to the caller's department whose review is open: AWAITING_DECISION (the department can decide now), AWAITING_OTHERS (under review, waiting for other departments or a later turn), AWAITING_RESUBMISSION (changes requested), ESCALATED. Each with its current stage, when it started, its timeout (dueAt, onTimeout) and whether it is overdue. sort=due (default): overdue first, then those awaiting your decision, then the nearest deadline; oldest / newest: by the stage's start. olderThanDays: the current stage started at least that many days ago. counts: per status under the other filters. For a department API key or a console session.",
      query: z.object({
        requestType: RequestType.optional(),
        status: z.enum(QUEUE_STATUSES).optional(),
        olderThanDays: z.coerce.number().min(0).max(3650).optional(),
        sort: z.enum(QUEUE_SORTS).default("due"),
        ...pageQuery(20),
      }),
      responses: { 200: { description: "A page of the queue", schema: QueueResponse } },
      handler: async ({ query, principal }) => ({
        body: await consoleQueue(context.pool, departmentOf(principal).code, query),
      }),
    }),
    route.get("/console/decisions", "getConsoleDecisions", {
      summary: "Your department's past decisions, newest first, searchable",
      description:
        "Every decision of the caller's department recorded on chain (including those a document update reopened), with its remarks and reason, the signer and custody the chain recorded, the transaction and block, and the reviewers whose passkeys signed it. q: words that must each match the request number, type, applicant, decision, reason, remarks or transaction hash (case-insensitive). For a department API key or a console session.",
      query: z.object({ q: z.string().max(200).optional(), ...pageQuery(20) }),
      responses: { 200: { description: "A page of decisions", schema: DecisionsResponse } },
      handler: async ({ query, principal }) => ({
        body: await departmentDecisions(context.pool, departmentOf(principal).code, baseUrl, query),
      }),
    }),
  ];
  const csp = contentSecurityPolicy(context.config);
  return { api, root: pageRoutes(csp) };
}

const operationName = (path: string) =>
  path
    .split(/[/.-]/)
    .filter(Boolean)
    .map((part, i) => (i === 0 ? part : part[0].toUpperCase() + part.slice(1)))
    .join("");

function pageRoutes(csp: string): RouteDefinition[] {
  // Read at start-up: a missing file is a broken build, not a 404 at the first visit.
  const pages = Object.entries(PAGE_FILES).map(([path, [file, contentType]]) =>
    staticPageRoute({
      csp,
      path,
      operationId: operationName(path === "/console" ? "/console/page" : path),
      summary: path === "/console" ? "The review console (sign in with a passkey)" : `The review console's ${file}`,
      body: readFileSync(new URL(`../../public/console/${file}`, import.meta.url), "utf8"),
      contentType,
    }),
  );
  const vendored = Object.entries(VENDOR_FILES).map(([path, locate]) =>
    staticPageRoute({
      csp,
      path,
      operationId: operationName(path),
      summary: `The review console's copy of ${path.slice("/console/vendor/".length)} (from its npm package)`,
      body: readFileSync(locate()),
      contentType: "text/javascript",
      cacheControl: "public, max-age=3600",
    }),
  );
  return [...pages, ...vendored];
}
