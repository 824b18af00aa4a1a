/**
 * The RFC 6749 §5.2 error body of the token endpoints, `{error, error_description}`, and a lenient body schema
 * for them: their request bodies are checked by the handlers (a bad body is an RFC `invalid_request`, not the
 * route table's VALIDATION_ERROR) while the OpenAPI document still shows the fields.
 */
import { z } from "zod/v4";
import type { HandlerResult } from "../http/routeTable.ts";

/** HTTP status of each token-endpoint error: 401 for client authentication failures, 400 otherwise (RFC 6749 §5.2). */
const OAUTH_ERROR_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  invalid_scope: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  expired_token: 400,
} as const;
export type OAuthErrorCode = keyof typeof OAUTH_ERROR_STATUS;

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

export function oauthError(
  error: OAuthErrorCode,
  description: string,
  headers: Record<string, string> = {},
): HandlerResult {
  return {
    status: OAUTH_ERROR_STATUS[error],
    body: { error, error_description: description },
    headers: { ...NO_STORE, ...headers },
  };
}

export const OAuthErrorSchema = z
  .object({
    error: z.enum(Object.keys(OAUTH_ERROR_STATUS) as [OAuthErrorCode, ...OAuthErrorCode[]]),
    error_description: z.string(),
  })
  .meta({ id: "OAuthError", description: "RFC 6749 §5.2 error of the token endpoints." });

type BodyField = {
  description: string;
  required?: boolean;
  example?: string;
  enum?: readonly string[];
  minLength?: number;
};

/** A body schema that never fails (every field optional, anything unusable becomes undefined) but documents `required`. */
export function lenientBody<K extends string>(id: string, description: string, fields: Record<K, BodyField>) {
  const entries = Object.entries(fields) as [K, BodyField][];
  const shape = Object.fromEntries(
    entries.map(([name, field]) => {
      // `enum` documents the only values the handler accepts (it answers the others itself, e.g. unsupported_grant_type).
      const meta = {
        description: field.description,
        ...(field.example ? { example: field.example } : {}),
        ...(field.enum ? { enum: [...field.enum] } : {}),
      };
      // `minLength` documents what the handler refuses itself (an empty field, named in its answer).
      const text = field.minLength ? z.string().min(field.minLength) : z.string();
      return [name, text.meta(meta).optional().catch(undefined)];
    }),
  ) as Record<K, z.ZodCatch<z.ZodOptional<z.ZodString>>>;
  const empty = Object.fromEntries(entries.map(([name]) => [name, undefined])) as Record<K, undefined>;
  const required = entries.filter(([, field]) => field.required).map(([name]) => name);
  return z
    .object(shape)
    .catch(empty as never)
    .meta({ id, description, required, default: undefined });
}

/**
 * What is wrong with the shape of a token request body, if anything: it must be a form or a JSON object (a JSON
 * array parses, but has no fields). Other JSON values never get here: the error middleware answers them.
 */
export function bodyShapeProblem(body: unknown): string | undefined {
  if (Array.isArray(body)) return "The request body is valid JSON but an array: it must be a JSON object";
  return undefined;
}

/** Reads one form/JSON field: a string, absent, or a problem (repeated or not a string). */
export function field(body: unknown, name: string): { value?: string; problem?: string } {
  const raw =
    body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>)[name] : undefined;
  if (raw === undefined || raw === null || raw === "") return {};
  if (Array.isArray(raw)) return { problem: `${name} is repeated` };
  if (typeof raw !== "string") return { problem: `${name} must be a string` };
  return { value: raw };
}
