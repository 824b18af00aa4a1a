/**
 * Console sessions as credentials. A browser signed in to the review console sends the `console_session` cookie
 * (HttpOnly, SameSite=Strict, Path=/, Secure in production); with no other credentials, a live session makes the
 * request its department's, naming the reviewer (`reviewerId`). Such a principal reaches only what a reviewer needs
 * (CONSOLE_SESSION_ROUTES and the /console/ routes): never the department's administration (API key, reviewers,
 * webhooks, custody). A cookie-authenticated write must come from the console's own origin (Origin header), on top
 * of SameSite=Strict: 403 CSRF_REJECTED otherwise.
 */
import type { Context } from "koa";
import type { Config } from "../config.ts";
import type { DbPool } from "../db/queryable.ts";
import { relyingParty } from "../domain/reviewers/relyingParty.ts";
import {
  SESSION_ABSOLUTE_SECONDS,
  SESSION_IDLE_SECONDS,
  SESSION_TOUCH_SECONDS,
  tokenHashOf,
} from "../domain/reviewers/sessions.ts";
import { AppError, forbidden } from "../domain/errors.ts";
import { liveSession, touchSession } from "../stores/reviewerStore.ts";
import type { Principal } from "./principal.ts";

export const CONSOLE_SESSION_COOKIE = "console_session";

/** The signed-in reviewer's session, set by the authenticator on requests it authenticated by cookie. */
export interface ConsoleSessionState {
  tokenHash: string;
  reviewerId: string;
  passkeyId: string;
  departmentCode: string;
}

declare module "koa" {
  interface DefaultState {
    consoleSession?: ConsoleSessionState;
  }
}

/**
 * Routes outside /console/ a console session may call (by operationId): the department's reads of requests,
 * documents, approvals and timelines, and deciding (typed data to sign, or the custodial approve / reject /
 * request-changes). Public routes stay public.
 */
export const CONSOLE_SESSION_ROUTES: ReadonlySet<string> = new Set([
  "listPendingRequests",
  "listRequests",
  "getRequest",
  "getRequestTimeline",
  "listApprovals",
  "listRequestDocuments",
  "getDocument",
  "downloadDocument",
  "getDepartment",
  "getDecisionTypedData",
  "approveRequest",
  "rejectRequest",
  "requestChanges",
]);

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function cookieAttributes(config: Pick<Config, "nodeEnv">): string {
  return `Path=/; HttpOnly; SameSite=Strict${config.nodeEnv === "production" ? "; Secure" : ""}`;
}

/** Set-Cookie for a new session (Max-Age: the absolute expiry; the idle one is the server's). */
export function sessionCookie(token: string, config: Pick<Config, "nodeEnv">): string {
  return `${CONSOLE_SESSION_COOKIE}=${token}; Max-Age=${SESSION_ABSOLUTE_SECONDS}; ${cookieAttributes(config)}`;
}

/** Set-Cookie that makes the browser forget the session. */
export function clearedSessionCookie(config: Pick<Config, "nodeEnv">): string {
  return `${CONSOLE_SESSION_COOKIE}=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; ${cookieAttributes(config)}`;
}

/** The sha256 of the request's session cookie, when it has one. */
export function sessionTokenHash(ctx: Context): string | undefined {
  const token = ctx.cookies.get(CONSOLE_SESSION_COOKIE);
  return token ? tokenHashOf(token) : undefined;
}

/**
 * The authenticator's cookie path: the session's principal, or undefined (anonymous) when there is no cookie or
 * it names no live session (a stale cookie must not stop the console's public sign-in routes).
 */
export function createConsoleSessionCheck(deps: {
  pool: DbPool;
  config: Config;
}): (ctx: Context) => Promise<Principal | undefined> {
  const { origin } = relyingParty(deps.config);
  return async (ctx) => {
    const tokenHash = sessionTokenHash(ctx);
    if (!tokenHash) return undefined;
    const session = await liveSession(deps.pool, tokenHash, SESSION_IDLE_SECONDS);
    if (!session) return undefined;
    if (!SAFE_METHODS.has(ctx.method) && ctx.get("origin") !== origin)
      throw new AppError(
        403,
        "CSRF_REJECTED",
        "A console session's writes must come from the console: the Origin header is missing or another site's",
      );
    await touchSession(deps.pool, tokenHash, SESSION_TOUCH_SECONDS);
    ctx.state.consoleSession = {
      tokenHash,
      reviewerId: session.reviewerId,
      passkeyId: session.passkeyId,
      departmentCode: session.departmentCode,
    };
    return {
      kind: "department",
      id: session.departmentCode,
      code: session.departmentCode,
      reviewerId: session.reviewerId,
    };
  };
}

/** 403 when a console session calls a route outside what a reviewer may reach (checked after authorisation). */
export function assertConsoleSessionMayCall(
  route: { path: string; operationId: string; access: { kind: string }[] },
  principal: Principal | undefined,
): void {
  if (principal?.kind !== "department" || !principal.reviewerId) return;
  if (route.access.some((rule) => rule.kind === "public")) return;
  if (route.path.startsWith("/console/") || CONSOLE_SESSION_ROUTES.has(route.operationId)) return;
  throw forbidden("A console session cannot call this route: it is for the department's API key or an administrator");
}

/** The signed-in reviewer's session; 403 for any other caller (an API key, a token). */
export function requireConsoleSession(ctx: Context): ConsoleSessionState {
  const session = ctx.state.consoleSession;
  const principal = ctx.state.principal;
  if (!session || principal?.kind !== "department" || principal.reviewerId !== session.reviewerId)
    throw forbidden("Only a reviewer signed in to the console (session cookie) may call this");
  return session;
}
