/**
 * `--compare BASE_URL`: the API's public verification answers about every audited licence and document version,
 * against the chain. Values are compared as what they mean (case, time format and number encoding aside), so only a
 * disagreement on a fact is a difference.
 */
import type { ChainAudit, DocumentAudit, DocumentVersionAudit, LicenceAudit } from "./auditRecord.ts";

export interface Difference {
  /** What was compared: "token 12", or "document <sha256> (token 12)". */
  subject: string;
  /** The field of the API's answer, as a path (e.g. "blockchainProof.ownerAddress"). */
  field: string;
  chain: unknown;
  api: unknown;
}

type Kind = "text" | "hex" | "time" | "number" | "boolean";
type Json = Record<string, any>;

/** GET, JSON body. Throws only when the API cannot be reached: any answer, even a 500, is something to compare. */
async function get(url: string): Promise<{ status: number; body: Json | undefined }> {
  const response = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let body: Json | undefined;
  try {
    body = text ? (JSON.parse(text) as Json) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body };
}

export async function compareWithApi(baseUrl: string, audit: ChainAudit): Promise<Difference[]> {
  const api = `${baseUrl.replace(/\/+$/, "").replace(/\/api\/v1$/, "")}/api/v1`;
  const differences: Difference[] = [];
  for (const licence of audit.licences) {
    const answers = await Promise.all([
      get(`${api}/verify/${licence.tokenId}`).then((answer) => compareLicence(licence, audit, answer)),
      ...licence.documents.flatMap((document) =>
        document.versions.map((version) =>
          // The same bytes may be anchored in other requests too: ask about this licence's record.
          get(`${api}/verify/document/${version.sha256.replace(/^0x/, "")}?tokenId=${licence.tokenId}`).then((answer) =>
            compareDocumentVersion(licence, document, version, audit, answer),
          ),
        ),
      ),
    ]);
    differences.push(...answers.flat());
  }
  return differences;
}

/** Verdicts of a licence that was issued; for any other token the API answers the verdict and the status only. */
const ISSUED_VALIDITIES = new Set(["VALID", "EXPIRED", "SUSPENDED", "REVOKED"]);

function compareLicence(
  licence: LicenceAudit,
  audit: ChainAudit,
  answer: { status: number; body: Json | undefined },
): Difference[] {
  const subject = `token ${licence.tokenId}`;
  if (answer.status !== 200 || !answer.body)
    return [{ subject, field: "(HTTP status)", chain: "exists: 200 expected", api: answer.status }];
  if (!ISSUED_VALIDITIES.has(licence.validity)) return compareNotIssued(subject, licence, answer.body);
  return [...compareIssued(subject, licence, audit, answer.body), ...compareApprovals(subject, licence, answer.body)];
}

/**
 * Not issued (a draft, under review, cancelled, rejected): the API keeps who applied and the owner private, so it
 * must answer the verdict and status alone; anything more it shows is a difference.
 */
function compareNotIssued(subject: string, licence: LicenceAudit, body: Json): Difference[] {
  const differences = fieldDifferences(subject, [
    ["tokenId", "number", licence.tokenId, body.tokenId],
    ["status", "text", licence.status, body.status],
    ["verdict", "text", licence.validity, body.verdict],
    ["isValid", "boolean", false, body.isValid],
    ["issuedAt", "time", null, body.issuedAt],
    ["expiresAt", "time", null, body.expiresAt],
  ]);
  const chain = "withheld: the licence was not issued";
  if (body.blockchainProof !== null && body.blockchainProof !== undefined)
    differences.push({ subject, field: "blockchainProof", chain, api: body.blockchainProof });
  if (Array.isArray(body.approvals) ? body.approvals.length > 0 : body.approvals !== undefined)
    differences.push({ subject, field: "approvals", chain, api: body.approvals });
  return differences;
}

/** An issued licence: its status, verdict, dates and the chain proof. */
function compareIssued(subject: string, licence: LicenceAudit, audit: ChainAudit, body: Json): Difference[] {
  const proof = (body.blockchainProof ?? {}) as Json;
  return fieldDifferences(subject, [
    ["tokenId", "number", licence.tokenId, body.tokenId],
    // The API reports an approved licence past its expiry as EXPIRED; the chain keeps it APPROVED (Expired is not stored).
    ["status", "text", licence.validity === "EXPIRED" ? "EXPIRED" : licence.status, body.status],
    ["verdict", "text", licence.validity, body.verdict],
    ["isValid", "boolean", licence.validity === "VALID", body.isValid],
    ["issuedAt", "time", licence.issuedAt, body.issuedAt],
    ["expiresAt", "time", licence.expiresAt, body.expiresAt],
    ["blockchainProof.chainId", "number", audit.chainId, proof.chainId],
    ["blockchainProof.contractAddress", "hex", audit.contracts.LicenceToken, proof.contractAddress],
    ["blockchainProof.tokenId", "number", licence.tokenId, proof.tokenId],
    ["blockchainProof.ownerAddress", "hex", licence.owner, proof.ownerAddress],
    // The issuance transaction, or the mint's while the licence was never issued.
    [
      "blockchainProof.transactionHash",
      "hex",
      (licence.issuance ?? licence.mint).transactionHash,
      proof.transactionHash,
    ],
    ["blockchainProof.mintTransactionHash", "hex", licence.mint.transactionHash, proof.mintTransactionHash],
  ]);
}

/** Standing approvals, matched by stage and department rather than by position: the order is not a fact. */
function compareApprovals(subject: string, licence: LicenceAudit, body: Json): Difference[] {
  const differences: Difference[] = [];
  const label = (stage: unknown, code: unknown) => `approvals[stage ${stage}, ${code}]`;
  const approved = (a: Json) => `approved at ${a.approvedAt} (tx ${a.transactionHash})`;
  const apiApprovals = new Map<string, Json>();
  for (const approval of Array.isArray(body.approvals) ? (body.approvals as Json[]) : [])
    apiApprovals.set(label(approval.stage, approval.departmentCode), approval);
  if (!Array.isArray(body.approvals))
    differences.push({
      subject,
      field: "approvals",
      chain: `${licence.approvals.length} approvals`,
      api: body.approvals,
    });
  for (const approval of licence.approvals) {
    const field = label(approval.stage, approval.departmentCode);
    const theirs = apiApprovals.get(field);
    apiApprovals.delete(field);
    if (!theirs) {
      differences.push({ subject, field, chain: approved(approval), api: "absent" });
      continue;
    }
    differences.push(
      ...fieldDifferences(subject, [
        [`${field}.approvedAt`, "time", approval.approvedAt, theirs.approvedAt],
        [`${field}.transactionHash`, "hex", approval.transactionHash, theirs.transactionHash],
      ]),
    );
  }
  for (const [field, theirs] of apiApprovals)
    differences.push({ subject, field, chain: "absent (no standing approval on chain)", api: approved(theirs) });
  return differences;
}

function compareDocumentVersion(
  licence: LicenceAudit,
  document: DocumentAudit,
  version: DocumentVersionAudit,
  audit: ChainAudit,
  answer: { status: number; body: Json | undefined },
): Difference[] {
  const subject = `document ${version.sha256} (token ${licence.tokenId}, ${document.docType} v${version.version})`;
  if (answer.status !== 200 || !answer.body)
    return [{ subject, field: "(HTTP status)", chain: "anchored: 200 expected", api: answer.status }];
  const body = answer.body;
  const record = (body.blockchainRecord ?? {}) as Json;
  return fieldDifferences(subject, [
    ["tokenId", "number", licence.tokenId, body.tokenId],
    ["documentId", "hex", document.documentId, body.documentId],
    ["docType", "text", document.docType, body.docType],
    ["version", "number", version.version, body.version],
    ["isLatest", "boolean", version.isLatest, body.isLatest],
    // A document version is valid exactly when it is the latest of its document.
    ["isValid", "boolean", version.isLatest, body.isValid],
    ["verdict", "text", version.isLatest ? "VALID" : "SUPERSEDED", body.verdict],
    ["blockchainRecord.transactionHash", "hex", version.transactionHash, record.transactionHash],
    ["blockchainRecord.blockNumber", "number", version.blockNumber, record.blockNumber],
    ["blockchainRecord.timestamp", "time", version.timestamp, record.timestamp],
    ["blockchainRecord.contractAddress", "hex", audit.contracts.DocumentRegistry, record.contractAddress],
  ]);
}

function fieldDifferences(subject: string, fields: [string, Kind, unknown, unknown][]): Difference[] {
  return fields
    .filter(([, kind, chain, api]) => !same(kind, chain, api))
    .map(([field, , chain, api]) => ({ subject, field, chain, api }));
}

function same(kind: Kind, chain: unknown, api: unknown): boolean {
  switch (kind) {
    case "text":
    case "boolean":
      return chain === api;
    case "hex":
      return typeof api === "string" && String(chain).toLowerCase() === api.toLowerCase();
    case "number":
      return (
        (typeof api === "number" || (typeof api === "string" && api.trim() !== "")) && Number(api) === Number(chain)
      );
    case "time":
      // null and an absent field both say "none".
      if (chain === null || chain === undefined) return api === null || api === undefined;
      return typeof api === "string" && Date.parse(api) === Date.parse(String(chain));
  }
}
