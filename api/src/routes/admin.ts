/** Administration reads (all admin only): platform statistics, the audit trail, the chain's status, the outbox. */
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import { validationFailed } from "../domain/errors.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { ADMIN_STATS_DEFINITIONS, adminStats, DEFAULT_PERIOD_DAYS, statsPeriod } from "../reads/adminStats.ts";
import { AUDIT_ACTOR_TYPES, AUDIT_ENTITY_TYPES, listAuditLogs } from "../reads/auditLogReads.ts";
import { listTransactions, TX_KINDS, TX_STATUSES } from "../reads/outboxReads.ts";
import { DateTime, Pagination, pageQuery, REQUEST_STATUSES, REQUEST_TYPES, Uuid } from "./schemas/common.ts";
import { blockchainStatus } from "../domain/chainStatus.ts";

const route = routeGroup({
  tags: ["Admin"],
  access: [{ kind: "admin" }],
  responses: { 401: "Not authenticated", 403: "Not an administrator" },
});

/** Administrators page through long histories: larger pages than the public lists. */
const ADMIN_MAX_LIMIT = 200;
const countsOf = (keys: readonly string[]) =>
  z.record(z.string(), z.int()).describe(`Every one of ${keys.join(", ")} (0 when none), plus any other value found`);

const AdminStatsQuery = z.object({
  startDate: z.iso
    .date()
    .optional()
    .describe(`First day (UTC), inclusive; default: ${DEFAULT_PERIOD_DAYS - 1} days before endDate`),
  endDate: z.iso.date().optional().describe("Last day (UTC), inclusive; default: today"),
});

const AdminStatsSchema = z
  .object({
    period: z.object({ start: z.iso.date(), end: z.iso.date() }),
    requests: z.object({ total: z.int(), byStatus: countsOf(REQUEST_STATUSES), byType: countsOf(REQUEST_TYPES) }),
    blockchain: z.object({
      totalTransactions: z.int(),
      nftsMinted: z.int(),
      avgGasUsed: z.number(),
      failedTransactions: z.int().describe("Ours: reverted on chain or refused by the node"),
    }),
    performance: z.object({
      avgProcessingTimeDays: z.number(),
      requestsPerDay: z.number(),
      decidedRequests: z.int().describe("Ours: the final decisions avgProcessingTimeDays averages"),
    }),
  })
  .meta({ id: "AdminStats" });

const AuditLogQuery = z
  .object({
    entityType: z.enum(AUDIT_ENTITY_TYPES).optional().describe("The spec's five, plus CLIENT and WEBHOOK"),
    entityId: z.string().min(1).max(256).optional().describe("Any string: a UUID, a department code, a client id"),
    action: z.string().min(1).max(64).optional().describe("Exact action, e.g. CREATE, SUBMIT, APPROVE, UPDATE"),
    actorType: z.enum(AUDIT_ACTOR_TYPES).optional().describe("Ours"),
    actorId: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe("Any string: an applicant's identity-locker id, a department code, a client id"),
    startDate: DateTime.optional().describe("From this time, inclusive"),
    endDate: DateTime.optional().describe("Up to this time, inclusive (to the millisecond)"),
    ...pageQuery(50, ADMIN_MAX_LIMIT),
  })
  .refine((q) => !q.startDate || !q.endDate || Date.parse(q.startDate) <= Date.parse(q.endDate), {
    message: "startDate must not be after endDate",
    path: ["startDate"],
  });

const jsonObject = z.record(z.string(), z.unknown()).nullable();
const AuditLogSchema = z
  .object({
    logId: Uuid,
    entityType: z.enum(AUDIT_ENTITY_TYPES),
    entityId: z
      .string()
      .describe(
        "A UUID (requests, approvals: the request's id, documents, workflows, webhooks), a department code, or a client id",
      ),
    action: z.string(),
    actorType: z.enum(AUDIT_ACTOR_TYPES),
    actorId: z
      .string()
      .describe("An applicant's identity-locker id, a department code, a client id, or `platform` (SYSTEM)"),
    oldValue: jsonObject,
    newValue: jsonObject,
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    createdAt: DateTime,
    requestId: z.string().nullable().describe("X-Request-Id of the HTTP request that made the change; null for jobs"),
    transactionHash: z.string().nullable().describe("The chain transaction recorded with the change, if any"),
  })
  .meta({ id: "AuditLog" });

const ChainNodeSchema = z.object({
  nodeId: z
    .string()
    .describe(
      "The node's id (public key) when it reports one (Besu admin_nodeInfo), else its client version; a validator's address for an absent validator",
    ),
  address: z.string().nullable().describe("Ours: the node's account, as validator sets list it"),
  source: z
    .enum(["rpc", "peer", "validator"])
    .describe(
      "Ours: rpc = the node the API uses; peer = connected to it; validator = in the validator set but not connected (not healthy)",
    ),
  isValidator: z.boolean(),
  isHealthy: z.boolean(),
  peers: z.int().nullable().describe("null when not known from our node"),
  latestBlock: z.int().nullable().describe("null when not known from our node"),
  clientVersion: z.string().nullable().describe("Ours"),
});

const BlockchainStatusSchema = z
  .object({
    network: z.object({
      chainId: z.int(),
      networkId: z.int(),
      consensus: z
        .string()
        .describe(
          "QBFT, IBFT 2.0 or Clique (from the validator API that answers), `none (single local node, …)` for anvil, or `unknown`",
        ),
      validators: z.array(z.string()).describe("Ours: the current validator set (empty without one)"),
    }),
    nodes: z.array(ChainNodeSchema),
    latestBlock: z.object({ number: z.int(), hash: z.string(), timestamp: DateTime }),
  })
  .meta({ id: "BlockchainStatus" });

const TransactionsQuery = z.object({
  txType: z
    .enum(TX_KINDS)
    .optional()
    .describe("The spec's MINT_NFT, APPROVAL, DOC_UPDATE, REJECT, REVOKE, plus the platform's other kinds"),
  status: z.enum(TX_STATUSES).optional(),
  ...pageQuery(50, ADMIN_MAX_LIMIT),
});

const BlockchainTransactionSchema = z
  .object({
    transactionId: Uuid.describe("The outbox record's id"),
    transactionHash: z.string(),
    txType: z.enum(TX_KINDS),
    status: z
      .enum(TX_STATUSES)
      .describe(
        "PENDING: signed and recorded, not yet mined; CONFIRMED: mined and succeeded; FAILED: mined and reverted, or refused by the node (then never mined)",
      ),
    from: z.string().describe("Signing wallet (checksummed)"),
    to: z.string().describe("Contract called (checksummed)"),
    nonce: z.int(),
    blockNumber: z.int().nullable(),
    gasUsed: z.int().nullable(),
    error: z
      .object({
        name: z.string().nullable().describe("The contract's custom error; null when the node refused the transaction"),
        message: z.string().nullable(),
        args: z.array(z.unknown()),
      })
      .nullable()
      .describe("null unless FAILED"),
    requestId: Uuid.nullable().describe("The licence request the transaction belongs to"),
    broadcasts: z.int().describe("Times sent to the node (re-broadcasts after a restart count)"),
    createdAt: DateTime.describe("Signed and recorded"),
    confirmedAt: DateTime.nullable(),
  })
  .meta({ id: "BlockchainTransaction" });

export function adminRoutes(context: DomainContext): RouteDefinition[] {
  return [
    route.get("/admin/stats", "getAdminStats", {
      summary: "Platform statistics over a period",
      description: ADMIN_STATS_DEFINITIONS,
      query: AdminStatsQuery,
      responses: {
        200: { description: "Statistics", schema: AdminStatsSchema },
        400: "VALIDATION_ERROR: bad dates, or startDate after endDate",
      },
      handler: async ({ query }) => {
        const period = statsPeriod(query);
        if (period.start > period.end) {
          const message = `startDate (${period.start}) must not be after endDate (${period.end})`;
          throw validationFailed(`Invalid query: ${message}`, {
            issues: [{ in: "query", path: "startDate", message }],
          });
        }
        return { body: await adminStats(context.pool, period) };
      },
    }),
    route.get("/admin/audit-logs", "listAuditLogs", {
      summary: "The audit trail, newest first",
      description:
        "One append-only record per state change, written in the change's own database transaction. Filters combine (AND). entityId and actorId are plain strings: departments are audited under their code, system clients under their client id, applicants under their identity-locker id. startDate and endDate are inclusive.",
      query: AuditLogQuery,
      responses: {
        200: {
          description: "Audit records",
          schema: z.object({ logs: z.array(AuditLogSchema), pagination: Pagination }),
        },
        400: "VALIDATION_ERROR",
      },
      handler: async ({ query }) => ({ body: await listAuditLogs(context.pool, query) }),
    }),
    route.get("/admin/blockchain/status", "getBlockchainStatus", {
      summary: "The chain: network, consensus, nodes and latest block",
      description:
        "Probes the RPC node in parallel, each probe with a 2 s timeout. Required: eth_chainId and the latest block (otherwise 503 CHAIN_UNAVAILABLE). Best effort: net_version, net_peerCount, web3_clientVersion, eth_syncing, and on Besu admin_nodeInfo, admin_peers and the validator set (qbft_ / ibft_getValidatorsByBlockNumber, clique_getSigners). nodes lists the RPC node (healthy when it answers, is on the configured chain and is not syncing), its connected peers (healthy unless their head is known to lag more than 10 blocks) and validators of the current set that are neither (not healthy). A local anvil is one node that seals every block.",
      responses: {
        200: { description: "Status", schema: BlockchainStatusSchema },
        503: "CHAIN_UNAVAILABLE: the node did not answer",
      },
      handler: async () => ({ body: await blockchainStatus(context) }),
    }),
    route.get("/admin/blockchain/transactions", "listBlockchainTransactions", {
      summary: "Transactions the platform signed (the outbox), newest first",
      description:
        "Every transaction is recorded, signed, before it is broadcast: PENDING until its receipt, then CONFIRMED (block and gas used) or FAILED (the decoded custom error; or refused by the node, never mined). txType takes the spec's five kinds and the platform's others.",
      query: TransactionsQuery,
      responses: {
        200: {
          description: "Transactions",
          schema: z.object({ transactions: z.array(BlockchainTransactionSchema), pagination: Pagination }),
        },
        400: "VALIDATION_ERROR",
      },
      handler: async ({ query }) => ({ body: await listTransactions(context.pool, query) }),
    }),
  ];
}
