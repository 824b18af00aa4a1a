/** Every route of the API, gathered from the route modules. Each capability adds its module here. */
import type { AuthModule } from "../auth/index.ts";
import type { DomainContext } from "../domain/context.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import { fileRoutes } from "./files.ts";
import { adminRoutes } from "./admin.ts";
import { approvalRoutes } from "./approvals.ts";
import { delegationRoutes } from "./delegations.ts";
import { departmentRoutes } from "./departments.ts";
import { holderProofRoutes } from "./holderProof.ts";
import { documentRoutes } from "./documents.ts";
import { requestRoutes } from "./requests.ts";
import { webhookRoutes } from "./webhooks.ts";
import { workflowRoutes } from "./workflows.ts";
import { reviewerRoutes } from "./reviewers.ts";
import { passkeySigningRoutes } from "./passkeySigning.ts";
import { consoleRoutes } from "./console.ts";
import { verifyRoutes } from "./verify.ts";
import { credentialRoutes } from "./credentials.ts";
import { oid4vciRoutes } from "./oid4vci.ts";
import type { QrIssuer } from "../domain/verification/qrPayload.ts";

export function apiRoutes(
  context: DomainContext,
  auth: AuthModule,
  issuer: QrIssuer,
): { api: RouteDefinition[]; root: RouteDefinition[] } {
  const verification = verifyRoutes(context, issuer);
  const reviewConsole = consoleRoutes(context);
  const credentials = credentialRoutes(context);
  const offers = oid4vciRoutes(context, auth.failures);
  return {
    api: [
      ...auth.routes,
      // Approvals first: /requests/pending must match before /requests/:requestId.
      ...approvalRoutes(context),
      ...requestRoutes(context),
      ...delegationRoutes(context),
      ...documentRoutes(context),
      ...departmentRoutes(context),
      ...workflowRoutes(context),
      ...webhookRoutes(context),
      ...adminRoutes(context),
      ...verification.api,
      ...holderProofRoutes(context),
      ...fileRoutes(context.documentStore, context.config),
      ...reviewerRoutes(context),
      ...passkeySigningRoutes(context),
      ...reviewConsole.api,
      ...credentials.api,
      ...offers.api,
    ],
    root: [...auth.rootRoutes, ...verification.root, ...reviewConsole.root, ...credentials.root, ...offers.root],
  };
}
