/**
 * Who is calling. Resolved once per request by the authenticator (bearer JWT, or department API key) and checked
 * against the route's access rules before the handler runs.
 */
export const SCOPES = [
  "applications:read",
  "applications:write",
  "documents:read",
  "documents:write",
  "verification:read",
  "admin",
] as const;
export type Scope = (typeof SCOPES)[number];

export type Principal =
  /** A citizen signed in through the identity locker: acts only on their own requests. */
  | { kind: "applicant"; id: string; name?: string; email?: string }
  /** A system client (OAuth 2.0 client credentials); the `admin` scope makes it an administrator. */
  | { kind: "client"; id: string; scopes: Scope[] }
  /**
   * A department: by its API key (X-API-Key + X-Department-Code), or one of its reviewers signed in to the console
   * with a passkey (`reviewerId` set; a console session reaches only the routes a reviewer needs).
   */
  | { kind: "department"; id: string; code: string; reviewerId?: string };

export const isAdmin = (p: Principal | undefined): boolean => p?.kind === "client" && p.scopes.includes("admin");

export const hasScope = (p: Principal | undefined, scope: Scope): boolean =>
  p?.kind === "client" && (p.scopes.includes(scope) || p.scopes.includes("admin"));

/** Resolves the caller of a request; undefined when no credentials were sent; throws 401 on bad credentials. */
export type Authenticator = (ctx: import("koa").Context) => Promise<Principal | undefined>;

declare module "koa" {
  interface DefaultState {
    principal?: Principal;
  }
}
