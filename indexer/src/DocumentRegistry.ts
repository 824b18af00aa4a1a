/** DocumentRegistry: documents (latest version per request and index) and every anchored version. */
import { documents, documentVersions } from "ponder:schema";
import { DocumentRegistryAbi } from "../../abis/index.ts";
import { bytes16ToUuid, bytes32ToString } from "./decode";
import { recordRole, register } from "./record";

register("DocumentRegistry", DocumentRegistryAbi, {
  DocumentAnchored: async ({ event, context }) => {
    const { tokenId, docIndex, version } = event.args;
    const documentId = bytes16ToUuid(event.args.documentId);
    const sha256Hash = event.args.sha256Hash.toLowerCase() as `0x${string}`;
    await context.db.insert(documentVersions).values({
      sha256Hash,
      tokenId,
      documentId,
      docIndex,
      version,
      blockNumber: event.block.number,
      txHash: event.transaction.hash,
      timestamp: event.block.timestamp,
    });

    const id = `${tokenId}-${docIndex}`;
    if (version === 1) {
      await context.db.insert(documents).values({
        id,
        tokenId,
        docIndex,
        documentId,
        docType: bytes32ToString(event.args.docType),
        latestVersion: version,
        latestHash: sha256Hash,
        createdAt: event.block.timestamp,
        updatedAt: event.block.timestamp,
        createdTx: event.transaction.hash,
        updatedTx: event.transaction.hash,
      });
    } else {
      // Later versions carry docType 0: the document keeps the type of version 1.
      await context.db.update(documents, { id }).set({
        latestVersion: version,
        latestHash: sha256Hash,
        updatedAt: event.block.timestamp,
        updatedTx: event.transaction.hash,
      });
    }
  },

  RoleGranted: ({ event, context }) => recordRole(context.db, "DocumentRegistry", true, event),
  RoleRevoked: ({ event, context }) => recordRole(context.db, "DocumentRegistry", false, event),
});
