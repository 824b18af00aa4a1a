/** Licence request resources (the spec's CreateRequestInput, RequestResponse, RequestSummary, RequestDetailResponse). */
import { z } from "zod/v4";
import { ApprovalStatus, DateTime, Pagination, RequestStatus, RequestType, TimelineEvent, Uuid } from "./common.ts";
import { WorkflowStage } from "./workflow.ts";
import { DocumentSchema } from "./document.ts";

export const CreateRequestInput = z
  .object({
    applicantId: z
      .string()
      .min(1)
      .max(128)
      .describe("Identity-locker id of the applicant (your own, unless you are a system client)"),
    requestType: RequestType,
    metadata: z.record(z.string(), z.unknown()).optional().describe("Free-form request data; any properties"),
  })
  .meta({ id: "CreateRequestInput" });

export const RequestResponse = z
  .object({
    requestId: Uuid,
    requestNumber: z.string(),
    status: RequestStatus,
    transactionHash: z.string(),
    createdAt: DateTime,
  })
  .meta({ id: "RequestResponse" });

export const RequestSummary = z
  .object({
    requestId: Uuid,
    requestNumber: z.string(),
    requestType: z.string(),
    status: RequestStatus,
    applicantName: z.string(),
    currentStage: z.string().describe("Name of the current stage; empty before submission"),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: "RequestSummary" });

export const RequestListResponse = z
  .object({ requests: z.array(RequestSummary), pagination: Pagination })
  .meta({ id: "RequestListResponse" });

export const ApprovalSchema = z
  .object({
    approvalId: Uuid,
    departmentCode: z.string(),
    departmentName: z.string(),
    status: ApprovalStatus,
    remarks: z.string(),
    reviewedDocuments: z.array(z.string()),
    isActive: z.boolean(),
    transactionHash: z.string(),
    createdAt: DateTime,
    invalidatedAt: DateTime.nullable(),
    invalidationReason: z.string().nullable(),
  })
  .meta({ id: "Approval" });

export const RequestDetailResponse = z
  .object({
    requestId: Uuid,
    requestNumber: z.string(),
    tokenId: z.int(),
    requestType: z.string(),
    status: RequestStatus,
    applicant: z.object({ id: z.string(), name: z.string(), email: z.string() }),
    metadata: z.record(z.string(), z.unknown()),
    documents: z.array(DocumentSchema),
    approvals: z.array(ApprovalSchema),
    currentStage: WorkflowStage.nullable().describe("null before submission and after the review closed"),
    timeline: z.array(TimelineEvent),
    blockchainData: z.object({ tokenId: z.int(), contractAddress: z.string(), creationTxHash: z.string() }),
    createdAt: DateTime,
    updatedAt: DateTime,
    submittedAt: DateTime.nullable(),
    approvedAt: DateTime.nullable(),
    expiresAt: DateTime.nullable(),
  })
  .meta({ id: "RequestDetailResponse" });

export const SubmitResponse = z
  .object({
    requestId: Uuid,
    status: z.string(),
    currentStage: WorkflowStage.nullable(),
    pendingDepartments: z.array(z.string()),
    transactionHash: z.string(),
  })
  .meta({ id: "SubmitResponse" });

export const CancelInput = z.object({ reason: z.string().max(1000).optional() }).meta({ id: "CancelInput" });
export const CancelResponse = z
  .object({ requestId: z.string(), status: z.string(), transactionHash: z.string() })
  .meta({ id: "CancelResponse" });
export const TimelineResponse = z
  .object({ requestId: z.string(), events: z.array(TimelineEvent) })
  .meta({ id: "TimelineResponse" });
