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
  body?: { contentType: "application/json" | "multipart/form-data" | "application/x-www-form-urlencoded"; schema: Json };
  /** Every kind of caller the operation accepts. */
  callers: CallerKind[];
  /** 4xx statuses documented with the RFC 6749 `{error, error_description}` body instead of `{code, message}`. */
  oauthErrorStatuses: number[];
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
      const parameters = ((op.parameters ?? []) as Json[]).map((p) => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: resolve(p.schema) }) as Parameter);
      const content = op.requestBody?.content as Record<string, Json> | undefined;
      const contentType = content ? (Object.keys(content)[0] as NonNullable<Operation["body"]>["contentType"]) : undefined;
      const oauthErrorStatuses = Object.entries((op.responses ?? {}) as Record<string, Json>)
        .filter(([status, r]) => /^4/.test(status) && JSON.stringify(r.content ?? {}).includes("#/components/schemas/OAuthError"))
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
    if ("BearerAuth" in requirement) kinds.add((requirement.BearerAuth as string[]).length === 0 ? "applicant" : "client");
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
    const target = ref.replace(/^#\//, "").split("/").reduce<Json>((node, key) => node?.[key], document);
    return resolveRefs(target ?? {}, document, [...seen, ref]);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, typeof v === "object" && v !== null ? resolveRefs(v, document, seen) : v]));
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
      return Object.fromEntries(Object.entries(properties).filter(([k]) => required.has(k)).map(([k, s]) => [k, exampleOf(s)]));
    }
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(schema.items ?? {}));
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum + 1 : 1;
    case "boolean":
      return true;
    case "string": {
      switch (schema.format) {
        case "uuid": return "00000000-0000-4000-8000-000000000000";
        case "date-time": return new Date().toISOString();
        case "date": return new Date().toISOString().slice(0, 10);
        case "uri": return "http://127.0.0.1:9/x";
        case "email": return "fuzz@example.org";
      }
      return "A".repeat(Math.max(1, schema.minLength ?? 1));
    }
    default:
      return "A";
  }
}
