/**
 * The document lists every status the API can answer. Three views of it:
 * - the served document is the one generated from the route table without a service (what the linter checks);
 * - for every route of the route table, the statuses its declaration makes reachable through the middleware
 *   (validation, body parsing, authentication and authorization, Idempotency-Key, rate limits, an unreachable
 *   database or chain) and through its handler (its declared responses) are documented, with their headers;
 * - requests that provoke the middleware's statuses on every operation get answers the document lists, in the
 *   documented shape. (The fuzz and authorization-matrix tests check every answer they get the same way.)
 */
import { expect } from "chai";
import { loadConfig } from "../../api/src/config.ts";
import { declaredRoutes, generateOpenApiDocument } from "../../api/src/http/openApiDocument.ts";
import type { RouteDefinition } from "../../api/src/http/routeTable.ts";
import { sendRaw } from "./support/fuzzHttp.ts";
import { loadOperations, undocumentedAnswer, type Operation } from "./support/openApiOperations.ts";
import { current, environment } from "./support/stackFixture.ts";

type Json = Record<string, any>;

describe("documented statuses", function () {
  let served: Json;
  let operations: Operation[];
  let routes: { prefix: string; route: RouteDefinition }[];
  let declared: ReturnType<typeof declaredRoutes>;

  before(async function () {
    ({ operations, document: served } = await loadOperations(current().api.url));
    declared = declaredRoutes(loadConfig({ ...environment(), PUBLIC_BASE_URL: served.servers[0].url }));
    routes = [
      ...declared.root.map((route) => ({ prefix: "", route })),
      ...declared.api.map((route) => ({ prefix: "/api/v1", route })),
    ];
  });

  it("the served /api/v1/openapi.json is the document generated from the route table without a service", async function () {
    const generated = generateOpenApiDocument(
      loadConfig({ ...environment(), PUBLIC_BASE_URL: served.servers[0].url }),
      undefined,
      declared,
    );
    expect(JSON.parse(JSON.stringify(generated))).to.deep.equal(served);
  });

  it("for every route of the route table, documents each status its declaration and handler can produce", function () {
    const missing: string[] = [];
    for (const { prefix, route } of routes) {
      const path = (prefix + route.path).replace(/:(\w+)/g, "{$1}");
      const operation = served.paths[path]?.[route.method] as Json | undefined;
      if (!operation) {
        missing.push(`${route.method.toUpperCase()} ${path}: not in the document`);
        continue;
      }
      const isPublic = route.access.some((rule) => rule.kind === "public");
      const bodyMethod = ["post", "put", "patch"].includes(route.method);
      const idempotent = (route.method === "post" || route.method === "put") && route.idempotent !== false;
      const expected: [number, string, string[]][] = [
        ...Object.keys(route.responses).map(
          (status) => [Number(status), "declared by the route", []] as [number, string, string[]],
        ),
        ...(route.params || route.query || route.body
          ? [[400, "validates its input", []] as [number, string, string[]]]
          : []),
        ...(bodyMethod
          ? ([
              [400, "parses a body", []],
              [413, "parses a body", []],
              [415, "parses a body", []],
            ] as [number, string, string[]][])
          : []),
        [401, "checks credentials", ["WWW-Authenticate"]],
        ...(isPublic ? [] : [[403, "refuses callers of other kinds", []] as [number, string, string[]]]),
        ...(idempotent
          ? ([
              [409, "honours Idempotency-Key", []],
              [422, "honours Idempotency-Key", []],
            ] as [number, string, string[]][])
          : []),
        [429, "is rate limited (failed authentications everywhere; writes and /auth/*)", ["Retry-After"]],
        [503, "needs the database", ["Retry-After"]],
        ...(route.sendsTransactions
          ? ([
              [502, "sends transactions", []],
              [504, "sends transactions", []],
            ] as [number, string, string[]][])
          : []),
      ];
      for (const [status, why, headers] of expected) {
        const response = operation.responses[String(status)] as Json | undefined;
        if (!response) {
          missing.push(`${route.method.toUpperCase()} ${path}: ${status} (it ${why})`);
          continue;
        }
        for (const header of headers)
          if (!response.headers?.[header])
            missing.push(`${route.method.toUpperCase()} ${path}: ${status} without header ${header}`);
        if (status >= 400 && !response.content)
          missing.push(`${route.method.toUpperCase()} ${path}: ${status} without its error body`);
      }
      if (
        idempotent &&
        !(operation.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "Idempotency-Key")
      ) {
        missing.push(`${route.method.toUpperCase()} ${path}: the Idempotency-Key header parameter`);
      }
    }
    expect(missing).to.deep.equal([]);
  });

  describe("answers provoked on every operation are documented", function () {
    const fill = (op: Operation) => op.path.replace(/\{(\w+)\}/g, "p0x1");
    /** `error`: the code and message of an answer in the Error shape (OAuth endpoints answer in their own). */
    const check = async (
      op: Operation,
      request: Parameters<typeof sendRaw>[1],
      expectedStatus: number,
      error?: { code: string; message: string },
    ) => {
      const response = await sendRaw(current().api.url, request);
      if (response.status !== expectedStatus)
        return `${op.method} ${op.path}: expected ${expectedStatus}, got ${response.status} ${response.text.slice(0, 200)}`;
      const json = response.json as Json | undefined;
      if (error && json?.code !== undefined && (json.code !== error.code || json.message !== error.message))
        return `${op.method} ${op.path}: expected ${JSON.stringify(error)}, got ${response.text.slice(0, 200)}`;
      return undocumentedAnswer(op, response.status, response.headers as Record<string, unknown>, response.json);
    };
    const forEvery = async (
      filter: (op: Operation) => boolean,
      run: (op: Operation) => Promise<string | undefined>,
    ) => {
      const selected = operations.filter(filter);
      expect(selected.length).to.be.greaterThan(0);
      const problems = (await Promise.all(selected.map(run))).filter(Boolean);
      expect(problems).to.deep.equal([]);
    };
    const bodyOps = (op: Operation) => ["POST", "PUT", "PATCH"].includes(op.method);

    it("invalid credentials: 401 on every operation, public ones included", async function () {
      await forEvery(
        () => true,
        (op) => check(op, { method: op.method, path: fill(op), headers: { authorization: "Bearer not-a-token" } }, 401),
      );
    });

    it("malformed JSON: 400 on every operation that takes a body", async function () {
      await forEvery(bodyOps, (op) =>
        check(
          op,
          { method: op.method, path: fill(op), headers: { "content-type": "application/json" }, body: "{nope" },
          400,
          { code: "MALFORMED_JSON", message: "The request body is not valid JSON" },
        ),
      );
    });

    it("valid JSON but not an object: 400 on every operation that takes a body", async function () {
      await forEvery(bodyOps, (op) =>
        check(
          op,
          { method: op.method, path: fill(op), headers: { "content-type": "application/json" }, body: "42" },
          400,
        ),
      );
    });

    it("a body over the limit: 413 on every operation that takes a body", async function () {
      const big = JSON.stringify({ blob: "x".repeat(1_100_000) });
      await forEvery(bodyOps, (op) =>
        check(
          op,
          { method: op.method, path: fill(op), headers: { "content-type": "application/json" }, body: big },
          413,
          { code: "PAYLOAD_TOO_LARGE", message: "The request body is larger than allowed" },
        ),
      );
    });

    it("rate limited: 429 with Retry-After on every operation (failed authentications are limited everywhere)", async function () {
      const stack = current();
      const limited = await stack.startExtraApi(undefined, {
        RATE_LIMIT_AUTH_PER_MINUTE: "1",
        RATE_LIMIT_WRITE_PER_MINUTE: "0",
      });
      try {
        // The one attempt a minute allows: from here on, every failed authentication from this address is a 429.
        await sendRaw(limited.url, {
          method: "GET",
          path: "/api/v1/requests",
          headers: { authorization: "Bearer not-a-token" },
        });
        const problems: string[] = [];
        for (const op of operations) {
          const response = await sendRaw(limited.url, {
            method: op.method,
            path: fill(op),
            headers: { authorization: "Bearer not-a-token" },
          });
          if (response.status !== 429) problems.push(`${op.method} ${op.path}: expected 429, got ${response.status}`);
          else {
            const problem = undocumentedAnswer(op, 429, response.headers as Record<string, unknown>, response.json);
            if (problem) problems.push(problem);
          }
        }
        expect(problems).to.deep.equal([]);
      } finally {
        await limited.stop();
      }
    });

    it("an unsupported Content-Encoding: 415 on every operation that takes a body", async function () {
      await forEvery(bodyOps, (op) =>
        check(
          op,
          {
            method: op.method,
            path: fill(op),
            headers: { "content-type": "application/json", "content-encoding": "x-unknown" },
            body: "{}",
          },
          415,
        ),
      );
    });
  });
});
