/** Every resource route of /api/v1, gathered from the route modules. Each issue's capability adds its module here. */
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Deployment } from "../chain/deployment.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import type { CoreServices } from "../services.ts";

export interface RouteDeps {
  config: Config;
  core: CoreServices;
  deployment: Deployment;
  logger: Logger;
}

export function apiRoutes(_deps: RouteDeps): RouteDefinition[] {
  return [];
}
