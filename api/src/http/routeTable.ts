/**
 * Routes are declared once, with Zod schemas for params, query, body and responses. The same declaration parses
 * requests (a failure is a 400 VALIDATION_ERROR naming each bad field), types the handler, and generates the
 * OpenAPI document (`openapi.ts`). Routes added later appear in the docs automatically.
 */
import { clientKey, principalKey, rateClassOf, type RateLimiter } from "./rateLimit.ts";
import Router, { type RouterContext } from "@koa/router";
import type { Context } from "koa";
import { z } from "zod/v4";
import { forbidden, unauthorized, validationFailed } from "../domain/errors.ts";
import { hasScope, isAdmin, type Authenticator, type Principal, type Scope } from "../auth/principal.ts";
import { fingerprint, isIdempotencyKey, type IdempotencyStore, type MinedWrite, type Recover } from "./idempotency.ts";
import { mostSpecificLayers } from "./allowedMethods.ts";
import { assertConsoleSessionMayCall } from "../auth/consoleSessions.ts";
import { isStorableText } from "../encoding/storableText.ts";
import type { RequestMeta } from "../stores/auditLog.ts";
import { requestMeta } from "./requestMeta.ts";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/**
 * Who may call a route (any one rule suffices), documented in OpenAPI and enforced before the handler runs:
 * - public: anyone;
 * - applicant: a citizen's identity-locker token;
 * - client: a system client whose token carries the scope (an admin token carries every scope);
 * - apiKey: a department (X-API-Key + X-Department-Code);
 * - admin: a token with the admin scope.
 * Ownership (an applicant's own request, a department's own code) is checked by the use case.
 */
export type AccessRule =
  | { kind: "public" }
  | { kind: "applicant" }
  | { kind: "client"; scope: Scope }
  | { kind: "apiKey" }
  | { kind: "admin" };

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  ctx: Context;
  /** The caller, as authenticated for this request (undefined: anonymous). */
  principal: Principal | undefined;
  /** Who made the request and from where: what use cases record in the audit trail. */
  meta: RequestMeta;
  /** For a multipart body, whose fingerprint is known once it is read: runs `run` under the Idempotency-Key. */
  idempotently: Idempotently;
  /** Whether the caller used the request's Idempotency-Key before (a retry, replayed rather than redone). */
  idempotencyKeyUsed: () => Promise<boolean>;
}

export interface HandlerResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteDefinition<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** Koa-style path relative to the router's prefix, e.g. "/requests/:requestId". */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  access: AccessRule[];
  params?: P;
  query?: Q;
  body?: B;
  bodyType?: "json" | "multipart" | "form";
  /**
   * false: ignore Idempotency-Key. For responses that must never be stored (tokens, new secrets) and for
   * operations that are harmless to repeat.
   */
  idempotent?: false;
  /**
   * "oauth": an OAuth token endpoint. Its errors are RFC 6749 §5.2 `{error, error_description}`, also for a body
   * that cannot be parsed (the error middleware answers those before any route is matched).
   */
  errorBody?: "oauth";
  /**
   * The handler reads the Authorization header itself (the OID4VCI credential endpoint's access tokens are not API
   * tokens): the API's authenticator is not run and the caller is anonymous.
   */
  ownAuthorization?: true;
  /** The handler sends blockchain transactions: the document adds 502 (node refused) and 504 (not mined in time). */
  sendsTransactions?: true;
  responses: Record<number, ResponseSpec>;
  handler: (input: HandlerInput<z.infer<P>, z.infer<Q>, z.infer<B>>) => Promise<HandlerResult> | HandlerResult;
  /**
   * Idempotency after a crash: rebuilds the original answer from the write the request recorded (its outbox
   * transaction, mined, as `gateway.send` returned it) when the process that ran it died before answering, or could
   * not save its answer. Required of every POST or PUT that sends transactions and honours Idempotency-Key (checked
   * when routes are mounted): it should answer with the same function as the handler, from the recorded write.
   */
  recoverIdempotent?: (
    input: HandlerInput<z.infer<P>, z.infer<Q>, z.infer<B>>,
    write: MinedWrite,
  ) => Promise<HandlerResult>;
}

/** A route as a module declares it: a response may be its description alone (an error status has the Error body). */
export type RouteDeclaration<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = Omit<
  RouteDefinition<P, Q, B>,
  "responses"
> & { responses: Record<number, ResponseSpec | string> };

export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  route: RouteDeclaration<P, Q, B>,
): RouteDefinition {
  const responses = Object.entries(route.responses).map(([status, spec]) => [
    status,
    typeof spec !== "string"
      ? spec
      : Number(status) < 400
        ? { description: spec }
        : { description: spec, schema: ErrorSchema },
  ]);
  return { ...route, responses: Object.fromEntries(responses) } as unknown as RouteDefinition;
}

/** Fields of a route in a group: those the group supplies (tags, access) become optional. */
type GroupRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, Given extends "tags" | "access"> = Omit<
  RouteDeclaration<P, Q, B>,
  "method" | "path" | "operationId" | Given
> &
  Partial<Pick<RouteDefinition, Given>>;

/**
 * A module's routes, declared as `route.post(path, operationId, {...})` in the order they are matched, with the
 * module's tags (and access) unless a route names its own, and the error responses every route of the module has.
 */
export function routeGroup<D extends Partial<Pick<RouteDefinition, "tags" | "access">>>(
  defaults: D & { responses?: Record<number, string> },
) {
  const declare =
    (method: HttpMethod) =>
    <P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
      path: string,
      operationId: string,
      route: GroupRoute<P, Q, B, keyof D & ("tags" | "access")>,
    ) => {
      const declared = route as unknown as RouteDeclaration<P, Q, B>;
      const responses = { ...defaults.responses, ...declared.responses };
      return defineRoute({ ...defaults, ...declared, responses, method, path, operationId });
    };
  return {
    get: declare("get"),
    post: declare("post"),
    put: declare("put"),
    patch: declare("patch"),
    delete: declare("delete"),
  };
}

/** Runs `run` under the request's Idempotency-Key (if any) with this request fingerprint. */
export type Idempotently = (fingerprint: string, run: () => Promise<HandlerResult>) => Promise<HandlerResult>;

/**
 * Mounts routes on a router: authenticate and authorise, parse with the route's schemas, run the handler.
 * POST and PUT honour an Idempotency-Key: JSON routes here, multipart routes in their handler (via
 * `idempotently`) once the file's hash is known. A handler that names no status answers with the route's first
 * success status (200 when it declares none).
 */
export function mountRoutes(
  router: Router,
  routes: RouteDefinition[],
  authenticate: Authenticator,
  idempotency?: IdempotencyStore,
  limiter?: RateLimiter,
): void {
  for (const route of routes) assertRecoverable(route);
  for (const route of routes) {
    const rateClass = rateClassOf(route);
    const honoursKey = honoursIdempotencyKey(route);
    const success = Number(Object.keys(route.responses).find((status) => status.startsWith("2")) ?? 200);
    router[route.method](route.operationId, route.path, async (ctx: Context, next: () => Promise<unknown>) => {
      // A parameter route does not answer a path that a more specific (static) pattern owns: DELETE /webhooks/logs
      // is a 405 of /webhooks/logs (see allowedMethods.ts), not a DELETE /webhooks/:webhookId with a bad id.
      if (mostSpecificLayers(ctx)[0]?.path !== (ctx as RouterContext).routerPath) return next();
      if (rateClass === "auth") await limiter?.take("auth", clientKey(ctx.ip));
      // Failed credentials are counted by the authenticator, per credential and address (FailedCredentials).
      ctx.state.principal = route.ownAuthorization ? undefined : await authenticate(ctx);
      const principal = ctx.state.principal;
      if (rateClass === "write") await limiter?.take("write", principal ? principalKey(principal) : clientKey(ctx.ip));
      else if (rateClass === undefined && principal) await limiter?.take("read", principalKey(principal));
      authorise(route.access, principal);
      assertConsoleSessionMayCall(route, principal);
      // A bad Idempotency-Key is refused before the request is read: without it the caller's retries are not safe.
      const key = honoursKey && idempotency ? idempotencyKeyOf(ctx) : "";
      const params = parse(route.params, ctx.params, "path");
      const query = parse(route.query, ctx.query, "query");
      // Multipart bodies are streamed and checked by their handler; the schema documents the form.
      const body =
        route.bodyType === "multipart"
          ? undefined
          : parse(route.body, (ctx.request as { body?: unknown }).body ?? {}, "body");
      const caller = principal ? `${principal.kind}:${principal.id}` : "anonymous";
      const answer = async (run: () => Promise<HandlerResult>) => {
        const result = await run();
        return { ...result, status: result.status ?? success };
      };
      const recover: Recover | undefined =
        route.recoverIdempotent && ((write) => answer(() => route.recoverIdempotent!(input, write)));
      const input: HandlerInput<unknown, unknown, unknown> = {
        params,
        query,
        body,
        ctx,
        principal,
        meta: requestMeta(ctx),
        idempotently: (print, run) =>
          key && idempotency ? idempotency.run(caller, key, print, () => answer(run), recover) : answer(run),
        idempotencyKeyUsed: async () => Boolean(key && idempotency && (await idempotency.holds(caller, key))),
      };
      const handle = async () => route.handler(input);
      const result =
        honoursKey && route.bodyType !== "multipart"
          ? await input.idempotently(fingerprint(ctx.method, ctx.originalUrl, rawBodyOf(ctx)), handle)
          : await answer(handle);
      ctx.status = result.status ?? 200;
      for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
      if (result.body !== undefined) ctx.body = result.body;
    });
  }
}

/** Whether mountRoutes (JSON) or the handler (multipart, via `idempotently`) honours Idempotency-Key. */
export function honoursIdempotencyKey(route: Pick<RouteDefinition, "method" | "idempotent">): boolean {
  return (route.method === "post" || route.method === "put") && route.idempotent !== false;
}

/**
 * A route that writes to the chain under an Idempotency-Key must be able to answer a retry whose first run died
 * after recording its write: otherwise that retry could only say "carried out, read the resource".
 */
function assertRecoverable(route: RouteDefinition): void {
  if (route.sendsTransactions && honoursIdempotencyKey(route) && !route.recoverIdempotent)
    throw new Error(
      `${route.method.toUpperCase()} ${route.path} (${route.operationId}) writes to the chain under Idempotency-Key: it needs recoverIdempotent`,
    );
}

/**
 * The request's Idempotency-Key, "" without one. A header sent empty (or otherwise not 1-255 visible ASCII
 * characters) is refused (400), never taken for an absent one: the caller meant its retries to be recognised.
 */
function idempotencyKeyOf(ctx: Context): string {
  const raw = ctx.headers["idempotency-key"];
  if (raw === undefined) return "";
  if (typeof raw === "string" && isIdempotencyKey(raw)) return raw;
  const message = `must be 1-255 visible ASCII characters${raw === "" ? " (it is empty)" : ""}`;
  throw invalid("header", `Idempotency-Key: ${message}`, [{ path: "Idempotency-Key", message }]);
}

/** The exact body text as received (koa-body keeps it as rawBody with includeUnparsed), or "" without a body. */
function rawBodyOf(ctx: Context): string {
  const raw = (ctx.request as { rawBody?: unknown }).rawBody;
  return typeof raw === "string" ? raw : "";
}

/** 401 when the route needs a caller and none (valid) was given; 403 when the caller matches no rule. */
export function authorise(access: AccessRule[], principal: Principal | undefined): void {
  if (access.some((rule) => rule.kind === "public")) return;
  if (!principal) throw unauthorized();
  const admits = (rule: AccessRule) => {
    if (rule.kind === "client") return hasScope(principal, rule.scope);
    if (rule.kind === "admin") return isAdmin(principal);
    return principal.kind === (rule.kind === "apiKey" ? "department" : rule.kind);
  };
  if (!access.some(admits)) throw forbidden();
}

function parse(schema: z.ZodType | undefined, value: unknown, where: "path" | "query" | "body") {
  if (!schema) return value;
  const unsafe = unsafeInput(value);
  if (unsafe) throw invalid(where, `${unsafe.path ? `${unsafe.path}: ` : ""}${unsafe.message}`, [unsafe]);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { issues } = result.error;
  const named = issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
  throw invalid(where, issues.map(describeIssue).join("; "), named);
}

/** 400 VALIDATION_ERROR: "Invalid <part>: …", with details.issues naming each bad field. */
function invalid(where: string, text: string, issues: { path: string; message: string }[]) {
  return validationFailed(`Invalid ${where}: ${text}`, { issues: issues.map((issue) => ({ in: where, ...issue })) });
}

/** Deepest nesting of arrays and objects accepted in a request (free-form `metadata` included). */
export const MAX_INPUT_DEPTH = 64;

/**
 * The first key or string of a parsed request part that cannot be stored (see isStorableText), or nesting deeper
 * than MAX_INPUT_DEPTH (which would overflow the stack of canonicalJson, JSON.stringify and Postgres). Iterative:
 * a body of 10^5 nested arrays is walked without recursion.
 */
function unsafeInput(value: unknown): { path: string; message: string } | undefined {
  type Node = { value: unknown; key: string; parent?: Node; depth: number };
  const pathOf = (node: Node) => {
    const keys: string[] = [];
    for (let n: Node | undefined = node; n?.parent; n = n.parent) keys.unshift(n.key);
    return keys.join(".");
  };
  const stack: Node[] = [{ value, key: "", depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.value === "string") {
      if (!isStorableText(node.value))
        return { path: pathOf(node), message: "must not contain NUL characters or unpaired surrogates" };
      continue;
    }
    if (!node.value || typeof node.value !== "object") continue;
    if (node.depth >= MAX_INPUT_DEPTH)
      return { path: pathOf(node), message: `nested more than ${MAX_INPUT_DEPTH} levels deep` };
    for (const [key, child] of Object.entries(node.value)) {
      const next: Node = { value: child, key, parent: node, depth: node.depth + 1 };
      if (!isStorableText(key))
        return { path: pathOf(next), message: "keys must not contain NUL characters or unpaired surrogates" };
      stack.push(next);
    }
  }
  return undefined;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}

/** OpenAPI error responses for the given statuses, each with the spec's Error body. */
export function errorResponses(codes: Record<number, string>): Record<number, ResponseSpec> {
  return Object.fromEntries(
    Object.entries(codes).map(([status, description]) => [status, { description, schema: ErrorSchema }]),
  );
}

/** The spec's Error body, shared by every route's error responses. */
export const ErrorSchema = z
  .object({
    code: z.string().meta({ example: "NOT_FOUND" }),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: "Error", description: "Every error response: a stable code, a readable message, optional details." });
