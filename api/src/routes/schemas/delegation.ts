/** Applicants' delegations to system clients (not in the spec: see docs/decisions.md, "Delegations"). */
import { z } from "zod/v4";
import { DateTime } from "./common.ts";

export const ClientIdField = z.string().min(1).max(100).describe("The system client's id (client_id)");

export const DelegationInput = z.object({ clientId: ClientIdField }).meta({ id: "DelegationInput" });

export const DelegationSchema = z
  .object({
    applicantId: z.string(),
    applicantName: z
      .string()
      .nullable()
      .describe("The applicant's name from their sign-in when they granted it: the name the client's requests carry"),
    clientId: z.string(),
    clientName: z.string(),
    scopes: z.array(z.string()).describe("The scopes the client holds: what it may do for the applicant"),
    grantedAt: DateTime,
  })
  .meta({ id: "Delegation" });

export const DelegationListResponse = z
  .object({ delegations: z.array(DelegationSchema) })
  .meta({ id: "DelegationListResponse" });
