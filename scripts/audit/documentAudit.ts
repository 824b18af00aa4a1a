/** A licence's documents from DocumentAnchored, each version checked against `anchorOf` and the whole against `documentsOf`. */
import { bytes16ToUuid } from "../../abis/index.ts";
import type { DocumentAudit } from "./auditRecord.ts";
import type { ContractViews } from "./contractViews.ts";
import { codeText } from "./departmentWallets.ts";
import type { ChainEvent } from "./logReader.ts";
import type { TransactionLookups } from "./transactionLookups.ts";

export async function auditDocuments(
  tokenId: number,
  events: ChainEvent[],
  views: ContractViews,
  lookups: TransactionLookups,
  findings: string[],
): Promise<{ documents: DocumentAudit[]; documentPhase: number }> {
  const byId = new Map<string, DocumentAudit>();
  for (const event of events.filter((e) => e.name === "DocumentAnchored")) {
    const documentId = bytes16ToUuid(event.args.documentId);
    const version = Number(event.args.version);
    let document = byId.get(documentId);
    if (!document) {
      document = { documentId, docIndex: Number(event.args.docIndex), docType: "", latestVersion: 0, versions: [] };
      byId.set(documentId, document);
    }
    // Only version 1 carries the type; later versions anchor the zero word.
    if (version === 1) document.docType = codeText(event.args.docType);
    document.latestVersion = Math.max(document.latestVersion, version);
    document.versions.push({
      version,
      sha256: String(event.args.sha256Hash).toLowerCase(),
      transactionHash: event.transactionHash,
      blockNumber: event.blockNumber,
      timestamp: await lookups.timeOf(event.blockNumber),
      isLatest: false, // from anchorOf below
    });
  }
  const documents = [...byId.values()].sort((a, b) => a.docIndex - b.docIndex);

  await Promise.all(
    documents.flatMap((document) =>
      document.versions.map(async (version) => {
        const [anchor, isLatest] = await views.call("DocumentRegistry", "anchorOf", tokenId, version.sha256);
        version.isLatest = isLatest;
        const expected = {
          tokenId,
          docIndex: document.docIndex,
          version: version.version,
          blockNumber: version.blockNumber,
          documentId: document.documentId,
        };
        const actual = {
          tokenId: Number(anchor.tokenId),
          docIndex: Number(anchor.docIndex),
          version: Number(anchor.version),
          blockNumber: Number(anchor.blockNumber),
          documentId: bytes16ToUuid(anchor.documentId),
        };
        for (const key of Object.keys(expected) as (keyof typeof expected)[]) {
          if (expected[key] !== actual[key])
            findings.push(
              `anchorOf(${tokenId}, ${version.sha256}).${key} is ${actual[key]} but its DocumentAnchored event says ${expected[key]}`,
            );
        }
        if (isLatest !== (version.version === document.latestVersion)) {
          findings.push(
            `anchorOf(${tokenId}, ${version.sha256}).isLatest is ${isLatest} but version ${version.version} of ${document.documentId} is ${version.version === document.latestVersion ? "" : "not "}the latest anchored`,
          );
        }
      }),
    ),
  );

  const [phase, count, versions] = await views.call("DocumentRegistry", "documentsOf", tokenId);
  const latestVersions = [...versions].map(Number);
  if (Number(count) !== documents.length)
    findings.push(`documentsOf(${tokenId}) counts ${count} documents but ${documents.length} were anchored`);
  for (const document of documents) {
    const latest = latestVersions[document.docIndex];
    if (latest !== document.latestVersion)
      findings.push(
        `documentsOf(${tokenId}) says document ${document.docIndex} is at version ${latest} but version ${document.latestVersion} was anchored last`,
      );
  }
  return { documents, documentPhase: Number(phase) };
}
