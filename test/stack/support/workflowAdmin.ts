/**
 * Registers a workflow definition over HTTP as the active version of its type, whatever earlier tests left:
 * PUT on the type's latest version when it has one (the next version, active at once), POST otherwise.
 */
import type { CreateWorkflowInput } from "../../../api/src/routes/schemas/workflow.ts";
import { apiClient, type Json } from "./httpClient.ts";

/** Every version of a type, oldest first. */
export async function workflowVersions(apiUrl: string, adminToken: string, workflowType: string): Promise<Json[]> {
  const listed = await apiClient(apiUrl, adminToken).get("/workflows");
  if (listed.status !== 200) throw new Error(`GET /workflows: ${listed.status} ${JSON.stringify(listed.body)}`);
  return (listed.body.workflows as Json[])
    .filter((w) => w.workflowType === workflowType)
    .sort((a, b) => a.version - b.version);
}

/** Makes `definition` the active workflow of its type; returns the new version (the API's Workflow body). */
export async function registerWorkflowVersion(
  apiUrl: string,
  adminToken: string,
  definition: CreateWorkflowInput | Json,
): Promise<Json> {
  const admin = apiClient(apiUrl, adminToken);
  const latest = (await workflowVersions(apiUrl, adminToken, definition.workflowType)).at(-1);
  const response = latest
    ? await admin.put(`/workflows/${latest.workflowId}`, definition)
    : await admin.post("/workflows", definition);
  if (response.status !== (latest ? 200 : 201))
    throw new Error(`workflow registration failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}
