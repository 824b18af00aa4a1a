/** A small HTTP client for the stack tests: JSON calls and multipart uploads as one caller (bearer token or none). */
import { expect } from "chai";

export type Json = Record<string, any>;

export interface HttpResult {
  status: number;
  headers: Headers;
  body: Json;
}

export async function httpResult(response: Response): Promise<HttpResult> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as Json };
}

export function apiClient(apiUrl: string, token?: string) {
  const auth = (): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
  const call = async (method: string, route: string, body?: unknown, extra: Record<string, string> = {}) =>
    httpResult(
      await fetch(`${apiUrl}/api/v1${route}`, {
        method,
        headers: { ...auth(), ...(body === undefined ? {} : { "content-type": "application/json" }), ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  const upload = async (
    method: "POST" | "PUT",
    route: string,
    file: Buffer,
    filename: string,
    fields: Record<string, string> = {},
    type = "application/octet-stream",
    extra: Record<string, string> = {},
  ) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.set("file", new Blob([new Uint8Array(file)], { type }), filename);
    return httpResult(
      await fetch(`${apiUrl}/api/v1${route}`, { method, headers: { ...auth(), ...extra }, body: form }),
    );
  };
  return {
    call,
    get: (route: string, extra?: Record<string, string>) => call("GET", route, undefined, extra),
    post: (route: string, body: unknown = {}, extra?: Record<string, string>) => call("POST", route, body, extra),
    put: (route: string, body: unknown, extra?: Record<string, string>) => call("PUT", route, body, extra),
    patch: (route: string, body: unknown, extra?: Record<string, string>) => call("PATCH", route, body, extra),
    delete: (route: string, extra?: Record<string, string>) => call("DELETE", route, undefined, extra),
    upload,
  };
}

/** An answer's status and, when given, its error code; a mismatch shows the body. */
export function expectError(response: { status: number; body: Json }, status: number, code?: string): void {
  expect(response.status, JSON.stringify(response.body)).to.equal(status);
  if (code !== undefined) expect(response.body?.code, JSON.stringify(response.body)).to.equal(code);
}
