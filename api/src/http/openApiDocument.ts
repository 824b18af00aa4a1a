/**
 * The service's OpenAPI document: what app.ts serves at /api/v1/openapi.json, and the same document generated
 * without a running service (for the linter, `test/openapi/`): the route table declared over inert dependencies,
 * since declaring routes only captures them; nothing is called while the document is built.
 */
import type { Config } from "../config.ts";
import { API_PREFIX, API_VERSION } from "../app.ts";
import { authRoutes } from "../auth/index.ts";
import { identityProviderOf } from "../auth/identityLocker.ts";
import type { DomainContext } from "../domain/context.ts";
import { apiRoutes } from "../routes/index.ts";
import type { QrIssuer } from "../domain/verification/qrPayload.ts";
import { serviceOpenApiDocument } from "./openapi.ts";
import type { RouteDefinition } from "./routeTable.ts";

/** The route table as main.ts declares it, over dependencies that throw if anything is called. */
export function declaredRoutes(config: Config): { api: RouteDefinition[]; root: RouteDefinition[] } {
  const context = { ...inert("context"), config } as unknown as DomainContext;
  const auth = authRoutes({
    config,
    logger: inert("logger"),
    clients: inert("clients"),
    codes: inert("codes"),
    tokens: inert("tokens"),
    provider: identityProviderOf(config, API_PREFIX),
    record: inert("record"),
  });
  return apiRoutes(
    context,
    { ...auth, authenticate: inert("authenticate"), bootstrapAdmin: inert("bootstrapAdmin") },
    inert("issuer") as QrIssuer,
  );
}

/**
 * The document for `config`. Route modules register their schemas' ids in zod's global registry, so a process can
 * declare the routes once: pass them in when this process already has them (declaredRoutes, or main.ts's).
 */
/** The document's pointer to the decisions log, which has a page of its own (/docs/decisions). */
export const DECISIONS_LINK =
  "Every point the specification leaves open is decided in the decisions log: [/docs/decisions](/docs/decisions).";

export function generateOpenApiDocument(
  config: Config,
  decisions: string | undefined = DECISIONS_LINK,
  routes = declaredRoutes(config),
): Record<string, unknown> {
  return serviceOpenApiDocument({
    prefix: API_PREFIX,
    version: API_VERSION,
    routes: routes.api,
    rootRoutes: routes.root,
    publicBaseUrl: config.publicBaseUrl!,
    decisions,
  });
}

/** A stand-in whose every property is another stand-in and which throws when called or constructed. */
function inert(name: string): any {
  return new Proxy(function inertDependency() {}, {
    get: (_target, key) => {
      if (key === "then") return undefined; // not a promise
      if (key === Symbol.toPrimitive || key === "toString") return () => `[${name}]`;
      return inert(`${name}.${String(key)}`);
    },
    apply: () => {
      throw new Error(`${name} was called while only declaring the routes`);
    },
    construct: () => {
      throw new Error(`${name} was constructed while only declaring the routes`);
    },
  });
}
