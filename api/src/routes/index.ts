/** Every route of the API, gathered from the route modules. Each capability adds its module here. */
import type { Logger } from "pino";
import type { AuthModule } from "../auth/index.ts";
import type { Config } from "../config.ts";
import type { Deployment } from "../chain/deployment.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import type { CoreServices } from "../services.ts";
import { fileRoutes, type DocumentStore } from "../storage/index.ts";

export interface RouteDeps {
  config: Config;
  core: CoreServices;
  deployment: Deployment;
  logger: Logger;
  auth: AuthModule;
  documentStore: DocumentStore;
}

export function apiRoutes(deps: RouteDeps): { api: RouteDefinition[]; root: RouteDefinition[] } {
  return {
    api: [...deps.auth.routes, ...fileRoutes(deps.documentStore, deps.config)],
    root: [...deps.auth.rootRoutes],
  };
}
