/**
 * A request as an applicant leaves it: created, its documents uploaded and, for submittedRequest, submitted.
 * Each step must succeed (201, 201 per document, 200), else it throws with the API's answer.
 */
import type { HttpResult } from "./httpClient.ts";
import type { Applicant } from "./sessions.ts";

/** Document type → its bytes (sent as site_plan.pdf, ownership_deed.png … by type and content), or [bytes, filename]. */
export type Documents = Record<string, Buffer | [Buffer, string]>;

const extension = (bytes: Buffer) =>
  bytes[0] === 0x89 ? "png" : bytes[0] === 0xff && bytes[1] === 0xd8 ? "jpg" : "pdf";

function must(response: HttpResult, status: number, step: string): HttpResult {
  if (response.status !== status)
    throw new Error(`${step}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response;
}

/** Uploads each document to request `id`; returns their documentIds and SHA-256 hashes by type. */
export async function uploadDocuments(applicant: Applicant, id: string, documents: Documents) {
  const docs: Record<string, string> = {};
  const hashes: Record<string, string> = {};
  for (const [docType, file] of Object.entries(documents)) {
    const [bytes, name] = Array.isArray(file) ? file : [file, `${docType.toLowerCase()}.${extension(file)}`];
    const uploaded = await applicant.upload("POST", `/requests/${id}/documents`, bytes, name, { docType });
    docs[docType] = must(uploaded, 201, `upload ${docType}`).body.documentId;
    hashes[docType] = uploaded.body.hash;
  }
  return { docs, hashes };
}

/** A Draft request of `requestType` with `documents` uploaded: its id, token id, request number, documents' ids and hashes. */
export async function draftRequest(
  applicant: Applicant,
  requestType: string,
  documents: Documents = {},
  metadata?: Record<string, unknown>,
) {
  const created = await applicant.post("/requests", { applicantId: applicant.id, requestType, metadata });
  const id = must(created, 201, "create request").body.requestId as string;
  const uploaded = await uploadDocuments(applicant, id, documents);
  const detail = must(await applicant.get(`/requests/${id}`), 200, "read request").body;
  return { id, tokenId: detail.tokenId as number, requestNumber: detail.requestNumber as string, ...uploaded };
}

/** draftRequest, then submitted: also the submit call's 200 body. */
export async function submittedRequest(
  applicant: Applicant,
  requestType: string,
  documents: Documents,
  metadata?: Record<string, unknown>,
) {
  const draft = await draftRequest(applicant, requestType, documents, metadata);
  const submitted = must(await applicant.post(`/requests/${draft.id}/submit`), 200, "submit");
  return { ...draft, submitted: submitted.body };
}
