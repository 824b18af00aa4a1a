/**
 * The one error handler, first in the chain after the request context: every failure leaves as the spec's
 * `{code, message, details?}`. AppErrors keep their status and code, chain and storage errors get theirs from
 * errorKinds.ts; body-parser and multipart limits become
 * 400/413; anything unexpected is a 500 whose body says nothing about internals (it is logged with the request id).
 * On the OAuth token endpoints (`oauthPaths`) a body that cannot be parsed is answered in their RFC 6749 §5.2 shape,
 * `{error: "invalid_request", error_description}`, since the body parser runs before any route is matched.
 */
import type { Context, Next } from "koa";
import { AppError } from "../domain/errors.ts";
import { NO_STORE } from "../auth/oauthErrors.ts";
import { answerOfKnownError } from "./errorKinds.ts";

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  httpCode?: number; // formidable (multipart) reports limits this way
  expose?: boolean;
  type?: string;
  code?: string | number;
  message?: string;
  body?: unknown; // co-body: the raw text it failed to parse
}

export interface ErrorMiddlewareOptions {
  /** Full paths (with the /api/v1 prefix) whose errors before routing take the OAuth shape, with their body type. */
  oauthPaths?: ReadonlyMap<string, string | undefined>;
}

/** A form-only token endpoint says what to send, whatever was wrong with the JSON it got instead. */
const FORM_ONLY = "The body must be application/x-www-form-urlencoded";

export function errorMiddleware(options: ErrorMiddlewareOptions = {}) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.body !== undefined) return;
      const { method, path } = ctx;
      if (ctx.status === 404) throw new AppError(404, "NOT_FOUND", `No route for ${method} ${path}`);
      // The routers' allowedMethods answer a known path with another method (405, with Allow) or an unknown method
      // (501) without a body: give them the Error body too.
      const allowed = `allowed: ${ctx.response.get("Allow") || "none"}`;
      if (ctx.status === 405)
        throw new AppError(405, "METHOD_NOT_ALLOWED", `${method} is not allowed on ${path}; ${allowed}`);
      if (ctx.status === 501) throw new AppError(501, "NOT_IMPLEMENTED", `The method ${method} is not supported`);
    } catch (error) {
      const mapped = toAppError(error);
      if (mapped.status >= 500 && !answerOfKnownError(error)) {
        ctx.state.log?.error({ err: error }, "unexpected error");
      }
      const path = ctx.path.replace(/\/+$/, "");
      if (mapped.status === 400 && BODY_PARSE_CODES.has(mapped.code) && options.oauthPaths?.has(path)) {
        const formOnly = options.oauthPaths.get(path) === "form" && ctx.request.is("json");
        ctx.status = 400;
        ctx.set(NO_STORE);
        ctx.body = { error: "invalid_request", error_description: formOnly ? FORM_ONLY : mapped.message };
        return;
      }
      ctx.status = mapped.status;
      for (const [name, value] of Object.entries(mapped.headers ?? {})) ctx.set(name, value);
      ctx.body = { code: mapped.code, message: mapped.message, ...(mapped.details ? { details: mapped.details } : {}) };
    }
  };
}

/**
 * Postgres unreachable or restarting: connection refused or reset, "Connection terminated", the pool's connect
 * timeout, or the server's shutdown codes (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now,
 * 08xxx connection exceptions).
 */
export function isDatabaseUnavailable(error: HttpLikeError & { severity?: string }): boolean {
  const code = String(error.code ?? "");
  if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "57P01", "57P02", "57P03"].includes(code) || /^08/.test(code))
    return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/i.test(
    error.message ?? "",
  );
}

/** The answer to any error: its kind's (errorKinds.ts), a parser's or server's error mapped, else a bare 500. */
export function toAppError(thrown: unknown): AppError {
  const known = answerOfKnownError(thrown);
  if (known) return known;
  const error = (thrown ?? {}) as HttpLikeError;
  if (isDatabaseUnavailable(error)) {
    return new AppError(
      503,
      "SERVICE_UNAVAILABLE",
      "The database is not reachable right now. Try again shortly (with the same Idempotency-Key, a retried write is not done twice).",
      undefined,
      { "Retry-After": "2" },
    );
  }
  const status = error.status ?? error.statusCode ?? error.httpCode;
  if (status === 413 || error.type === "entity.too.large" || error.code === 1009 || error.code === 1016) {
    return new AppError(413, "PAYLOAD_TOO_LARGE", "The request body is larger than allowed");
  }
  // The JSON parser (@hapi/bourne) refuses a "__proto__" key rather than let it reach an object's prototype.
  if (status === 400 && /forbidden prototype property/.test(error.message ?? "")) {
    return new AppError(
      400,
      "FORBIDDEN_PROPERTY",
      'The request body has a "__proto__" key: refused, as it would set the prototype of the object it is parsed into',
    );
  }
  if (error.type === "entity.parse.failed" || (status === 400 && /JSON/i.test(error.message ?? ""))) {
    // The parser accepts only an object or an array at the top: say which it was when the text is valid JSON.
    const kind = jsonKind(error.body);
    if (kind) {
      const message = `The request body is valid JSON but ${kind}: it must be a JSON object`;
      return new AppError(400, "VALIDATION_ERROR", message, {
        issues: [{ in: "body", path: "", message: `expected a JSON object, got ${kind}` }],
      });
    }
    return new AppError(400, "MALFORMED_JSON", "The request body is not valid JSON");
  }
  // A body whose Content-Encoding (gzip, deflate, br) does not decode: zlib's error, passed on by the body parser.
  if (typeof error.code === "string" && /^(Z_|ERR__ERROR_|ERR_BROTLI_)/.test(error.code)) {
    return new AppError(400, "BAD_REQUEST", "The request body could not be decoded with its Content-Encoding");
  }
  if (status === 415 || error.type === "encoding.unsupported") {
    return new AppError(415, "UNSUPPORTED_MEDIA_TYPE", "Unsupported request content type or encoding");
  }
  if (status && status >= 400 && status < 500 && error.expose !== false) {
    return new AppError(status, status === 400 ? "BAD_REQUEST" : "REQUEST_ERROR", error.message ?? "Bad request");
  }
  return new AppError(500, "INTERNAL_ERROR", "An unexpected error occurred");
}

/** The error codes of a body that could not be parsed: answered as `invalid_request` on the token endpoints. */
const BODY_PARSE_CODES = new Set(["MALFORMED_JSON", "VALIDATION_ERROR", "BAD_REQUEST", "FORBIDDEN_PROPERTY"]);

/** "a number", "a string", "true", "false" or "null" when `text` is a JSON text other than an object or array. */
function jsonKind(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") return "a number";
  if (typeof value === "string") return "a string";
  return undefined;
}
