/**
 * The callers a stack test sets up before its first step: the stack's administrator, applicants signed in through
 * the development identity provider, departments with their API key. Each throws unless its set-up succeeded.
 */
import type { Stack } from "../../../scripts/stack/stack.ts";
import { applicantToken, clientToken, type ApplicantLogin } from "./authClient.ts";
import { createDepartment, departmentClient } from "./departmentClient.ts";
import { apiClient } from "./httpClient.ts";
import { current } from "./stackFixture.ts";

/** A run's id spelled in letters: department codes are letters and underscores only. */
export const letters = (run: string | number) => String(run).replace(/\d/g, (d) => "ABCDEFGHIJ"[Number(d)]);

/** The stack's administrator: its client-credentials token (scope admin) and an HTTP client holding it. */
export async function adminSession(stack: Stack = current()) {
  const api = stack.api.url;
  const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
  return { api, adminToken, admin: apiClient(api, adminToken) };
}

export type Applicant = ReturnType<typeof apiClient> & { id: string };

/** An applicant signed in at `api`: a client holding its token, and its id (the requests' applicantId). */
export async function applicantClient(api: string, login: ApplicantLogin): Promise<Applicant> {
  return { ...apiClient(api, await applicantToken(api, login)), id: login.id };
}

/** A department registered by the administrator (createDepartment's input) and a client calling with its API key. */
export async function departmentSession(
  api: string,
  adminToken: string,
  input: Parameters<typeof createDepartment>[2],
  options: { sign?: boolean } = {},
) {
  const created = await createDepartment(api, adminToken, input);
  return { ...created, client: departmentClient(api, created, options) };
}
