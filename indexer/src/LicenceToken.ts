/** LicenceToken: licences, their status history and the status lists' anchors. (The review phase is the approval registry's ReviewPhaseChanged.) */
import { licences, licenceStatusHistory, statusListAnchors } from "ponder:schema";
import { LicenceTokenAbi } from "../../abis/index.ts";
import { licenceStatus } from "./decode";
import { eventId, recordRole, register } from "./record";

register("LicenceToken", LicenceTokenAbi, {
  LicenceMinted: async ({ event, context }) => {
    await context.db.insert(licences).values({
      tokenId: event.args.tokenId,
      owner: event.args.owner,
      workflowId: event.args.workflowId,
      applicantCommitment: event.args.applicantCommitment,
      status: "DRAFT",
      reasonCode: 0,
      issuedAt: null,
      expiresAt: null,
      createdBlock: event.block.number,
      createdTx: event.transaction.hash,
      createdAt: event.block.timestamp,
      updatedBlock: event.block.number,
      updatedAt: event.block.timestamp,
    });
  },

  LicenceStatusChanged: async ({ event, context }) => {
    const { tokenId, from, to, reasonCode, actor } = event.args;
    const toStatus = licenceStatus(to);
    await context.db.update(licences, { tokenId }).set({
      status: toStatus,
      reasonCode,
      updatedBlock: event.block.number,
      updatedAt: event.block.timestamp,
    });
    await context.db.insert(licenceStatusHistory).values({
      id: eventId(event),
      tokenId,
      fromStatus: licenceStatus(from),
      toStatus,
      reasonCode,
      actor,
      blockNumber: event.block.number,
      logIndex: event.log.logIndex,
      txHash: event.transaction.hash,
      timestamp: event.block.timestamp,
    });
  },

  LicenceIssued: async ({ event, context }) => {
    await context.db.update(licences, { tokenId: event.args.tokenId }).set({
      issuedAt: BigInt(event.args.issuedAt),
      expiresAt: BigInt(event.args.expiresAt),
      updatedBlock: event.block.number,
      updatedAt: event.block.timestamp,
    });
  },

  StatusListAnchored: async ({ event, context }) => {
    const { list, sequence, revocation, suspension, tokenStatus } = event.args;
    await context.db.insert(statusListAnchors).values({
      list,
      sequence,
      revocation,
      suspension,
      tokenStatus,
      blockNumber: event.block.number,
      txHash: event.transaction.hash,
      timestamp: event.block.timestamp,
    });
  },

  RoleGranted: ({ event, context }) => recordRole(context.db, "LicenceToken", true, event),
  RoleRevoked: ({ event, context }) => recordRole(context.db, "LicenceToken", false, event),
});
