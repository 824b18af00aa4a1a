/**
 * The error type use cases and reads raise on purpose: a status, a spec error code, a message safe to show, and
 * optional details. It lives outside http/ so that they can raise it without importing the HTTP layer. Chain and
 * storage code raise errors of their own kinds (chain/chainErrors.ts, storage/storageErrors.ts), which carry no
 * status; the error middleware answers them all (http/errorKinds.ts), anything else as a 500 without internals.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const validationFailed = (message: string, details?: Record<string, unknown>) =>
  new AppError(400, "VALIDATION_ERROR", message, details);
export const unauthorized = (message = "Authentication is missing or invalid") =>
  new AppError(401, "UNAUTHORIZED", message);
export const forbidden = (message = "You are not allowed to do this") => new AppError(403, "FORBIDDEN", message);
export const notFound = (what = "Resource") => new AppError(404, "NOT_FOUND", `${what} not found`);
export const conflict = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(409, code, message, details);
