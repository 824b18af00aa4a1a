/** Every route of the API, gathered from the route modules. Each capability adds its module here. */
import type { AuthModule } from "../auth/index.ts";
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import { fileRoutes } from "../storage/index.ts";
import { approvalRoutes } from "./approvals.ts";
import { departmentRoutes } from "./departments.ts";
import { documentRoutes } from "./documents.ts";
import { requestRoutes } from "./requests.ts";
import { webhookRoutes } from "./webhooks.ts";
import { workflowRoutes } from "./workflows.ts";

export function apiRoutes(context: DomainContext, auth: AuthModule): { api: RouteDefinition[]; root: RouteDefinition[] } {
  return {
    api: [
      ...auth.routes,
      // Approvals first: /requests/pending must match before /requests/:requestId.
      ...approvalRoutes(context),
      ...requestRoutes(context),
      ...documentRoutes(context),
      ...departmentRoutes(context),
      ...workflowRoutes(context),
      ...webhookRoutes(context),
      ...fileRoutes(context.documentStore, context.config),
    ],
    root: [...auth.rootRoutes],
  };
}
