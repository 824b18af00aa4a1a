/**
 * The operations of the API as its own OpenAPI document lists them (GET /api/v1/openapi.json, generated from the
 * route table): method, path, path and query parameters, request body (content type and schema, $refs resolved),
 * who may call, and which error shape its 4xx responses document. Used by the fuzz tests to cover every endpoint,
 * including ones added after the tests were written.
 */

type Json = Record<string, any>;

export type CallerKind = "public" | "applicant" | "client" | "department" | "admin";

export interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: Json;
}

export interface Operation {
  operationId: string;
  method: string;
  /** OpenAPI path with {param} placeholders, e.g. /api/v1/requests/{requestId}. */
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  body?: {
    contentType: "application/json" | "multipart/form-data" | "application/x-www-form-urlencoded";
    schema: Json;
  };
  /** Every kind of caller the operation accepts. */
  callers: CallerKind[];
  /** 4xx statuses documented with the RFC 6749 (or OID4VCI) `{error, error_description}` body, not `{code, message}`. */
  oauthErrorStatuses: number[];
  /** Every documented response by status: its body's alternative schemas ($refs resolved) and its headers. */
  responses: Record<number, DocumentedResponse>;
}

export interface DocumentedResponse {
  schemas: Json[];
  headers: string[];
}

const METHODS = ["get", "post", "put", "patch", "delete"];

export async function loadOperations(apiUrl: string): Promise<{ operations: Operation[]; document: Json }> {
  const response = await fetch(`${apiUrl}/api/v1/openapi.json`);
  if (response.status !== 200) throw new Error(`GET /api/v1/openapi.json: ${response.status}`);
  const document = (await response.json()) as Json;
  const resolve = (schema: Json | undefined): Json => resolveRefs(schema ?? {}, document);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const parameters = ((op.parameters ?? []) as Json[]).map(
        (p) => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: resolve(p.schema) }) as Parameter,
      );
      const content = op.requestBody?.content as Record<string, Json> | undefined;
      const contentType = content
        ? (Object.keys(content)[0] as NonNullable<Operation["body"]>["contentType"])
        : undefined;
      const oauthErrorStatuses = Object.entries((op.responses ?? {}) as Record<string, Json>)
        .filter(
          ([status, r]) =>
            /^4/.test(status) &&
            /#\/components\/schemas\/(OAuthError|Oid4vciError)"/.test(JSON.stringify(r.content ?? {})),
        )
        .map(([status]) => Number(status));
      operations.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === "path"),
        queryParams: parameters.filter((p) => p.in === "query"),
        body: content && contentType ? { contentType, schema: resolve(content[contentType].schema) } : undefined,
        callers: callersOf((op.security ?? []) as Json[]),
        oauthErrorStatuses,
        responses: Object.fromEntries(
          Object.entries((op.responses ?? {}) as Record<string, Json>)
            .filter(([status]) => /^\d{3}$/.test(status))
            .map(([status, r]) => {
              const schema = resolve(Object.values((r.content ?? {}) as Record<string, Json>)[0]?.schema);
              const schemas =
                Object.keys(schema).length === 0
                  ? []
                  : Array.isArray(schema.oneOf)
                    ? (schema.oneOf as Json[])
                    : [schema];
              return [
                Number(status),
                { schemas, headers: Object.keys((r.headers ?? {}) as Json).map((h) => h.toLowerCase()) },
              ];
            }),
        ),
      });
    }
  }
  return { operations, document };
}

function callersOf(security: Json[]): CallerKind[] {
  if (security.length === 0) return ["public"];
  const kinds = new Set<CallerKind>();
  for (const requirement of security) {
    if ("ApiKeyAuth" in requirement) kinds.add("department");
    if ("AdminAuth" in requirement) kinds.add("admin");
    if ("BearerAuth" in requirement)
      kinds.add((requirement.BearerAuth as string[]).length === 0 ? "applicant" : "client");
  }
  return [...kinds];
}

/** The schema with every local $ref replaced by its target (cycles are cut at the second visit). */
export function resolveRefs(schema: Json, document: Json, seen: string[] = []): Json {
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(s, document, seen)) as unknown as Json;
  if (!schema || typeof schema !== "object") return schema;
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref as string;
    if (seen.includes(ref)) return {};
    const target = ref
      .replace(/^#\//, "")
      .split("/")
      .reduce<Json>((node, key) => node?.[key], document);
    return resolveRefs(target ?? {}, document, [...seen, ref]);
  }
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      typeof v === "object" && v !== null ? resolveRefs(v, document, seen) : v,
    ]),
  );
}

/**
 * A value the schema accepts, as far as a JSON Schema says (examples, defaults, enums, formats, bounds); for
 * operations no hand-written valid body exists for. Patterns are not solved: a string with a pattern gets "A".
 */
export function exampleOf(schema: Json): unknown {
  if (!schema || typeof schema !== "object") return null;
  if ("example" in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if ("default" in schema && schema.default !== undefined) return schema.default;
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives?.length) return exampleOf(alternatives.find((a) => a.type !== "null") ?? alternatives[0]);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: Json) => exampleOf(s)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const required = new Set<string>((schema.required as string[] | undefined) ?? Object.keys(properties));
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([k]) => required.has(k))
          .map(([k, s]) => [k, exampleOf(s)]),
      );
    }
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(schema.items ?? {}));
    case "integer":
    case "number":
      return typeof schema.minimum === "number"
        ? schema.minimum
        : typeof schema.exclusiveMinimum === "number"
          ? schema.exclusiveMinimum + 1
          : 1;
    case "boolean":
      return true;
    case "string": {
      switch (schema.format) {
        case "uuid":
          return "00000000-0000-4000-8000-000000000000";
        case "date-time":
          return new Date().toISOString();
        case "date":
          return new Date().toISOString().slice(0, 10);
        case "uri":
          return "http://127.0.0.1:9/x";
        case "email":
          return "fuzz@example.org";
      }
      return "A".repeat(Math.max(1, schema.minLength ?? 1));
    }
    default:
      return "A";
  }
}

/**
 * What is wrong with an answer for the document, if anything: its status is not documented for the operation, a
 * documented header is missing, or an error body has none of the documented shapes (the required keys of one of
 * the documented object schemas). Used by the fuzz, matrix and status tests on every answer they get.
 */
export function undocumentedAnswer(
  op: Operation,
  status: number,
  headers: Headers | Record<string, unknown>,
  body: unknown,
): string | undefined {
  const documented = op.responses[status];
  if (!documented)
    return `${op.method} ${op.path} answered ${status}, which its document does not list (documented: ${Object.keys(op.responses).join(", ")})`;
  const has = (name: string) => (headers instanceof Headers ? headers.has(name) : headers[name] !== undefined);
  const missing = documented.headers.filter((name) => !["www-authenticate"].includes(name) && !has(name));
  if (missing.length)
    return `${op.method} ${op.path} answered ${status} without the documented header(s) ${missing.join(", ")}`;
  if (status < 400 || documented.schemas.length === 0) return undefined;
  const fits = documented.schemas.some((schema) => {
    if (schema.type !== "object") return true;
    if (!body || typeof body !== "object" || Array.isArray(body)) return false;
    return ((schema.required ?? []) as string[]).every((key) => key in (body as Json));
  });
  return fits
    ? undefined
    : `${op.method} ${op.path} answered ${status} with a body of none of the documented shapes: ${JSON.stringify(body).slice(0, 200)}`;
}

/**
 * The operation a request reaches, as the API routes it: same method, a path of the same segments where the
 * document's static segments match (case-insensitively) and parameters take any non-empty segment, the most
 * specific (static before parameter, from the left) winning. undefined: no operation (the answer is the router's
 * 404 or 405, or the HTTP parser's).
 */
export function operationReached(operations: Operation[], method: string, pathAndQuery: string): Operation | undefined {
  // The router is not strict about one trailing slash (and only one: "/workflows//" is not "/workflows").
  const parts = pathAndQuery.split("?")[0].replace(/\/$/, "").split("/").slice(1);
  const segmentsOf = (op: Operation) => op.path.split("/").slice(1);
  let best: Operation | undefined;
  let bestKinds: boolean[] = [];
  for (const op of operations) {
    if (op.method !== method.toUpperCase() && !(method.toUpperCase() === "HEAD" && op.method === "GET")) continue;
    const segments = segmentsOf(op);
    if (segments.length !== parts.length) continue;
    const fits = segments.every((segment, i) =>
      /^\{.+\}$/.test(segment) ? parts[i].length > 0 : segment.toLowerCase() === parts[i].toLowerCase(),
    );
    if (!fits) continue;
    const kinds = segments.map((segment) => !/^\{.+\}$/.test(segment));
    const firstDifference = kinds.findIndex((k, i) => k !== bestKinds[i]);
    if (!best || (firstDifference >= 0 && kinds[firstDifference])) {
      best = op;
      bestKinds = kinds;
    }
  }
  return best;
}
