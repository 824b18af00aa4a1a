/**
 * The event outbox: an event row, its deliveries (one per subscribed webhook and name) and their delivery jobs,
 * written in one database transaction. Event ids are deterministic, so writing the same event twice adds nothing.
 * A webhook gets an event when it belongs to one of the event's departments, or when it has no department (an
 * administrator's webhook, which gets every event). Disabled webhooks get the delivery HELD until re-enabled.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { enqueueJob, JOB_NAMES } from "../jobs/jobQueue.ts";
import type { WebhookEvent } from "../webhooks/events.ts";
import { deliveryIdOf, NAMES_OF, payloadOf, type PlatformEvent } from "../webhooks/payloads.ts";

/** Writes the events that are new and their deliveries; returns how many deliveries were queued. */
export async function recordEvents(
  client: pg.PoolClient,
  events: readonly PlatformEvent[],
  chainTxId: string | null,
): Promise<number> {
  let queued = 0;
  for (const event of events) {
    const inserted = await client.query(
      `INSERT INTO events (id, type, request_id, departments, data, chain_tx_id, occurred_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [
        event.id,
        event.type,
        event.requestId,
        event.departments,
        JSON.stringify(eventRecord(event)),
        chainTxId,
        event.occurredAt,
      ],
    );
    if (inserted.rowCount === 0) continue;
    const names = NAMES_OF[event.type];
    const { rows: webhooks } = await client.query(
      `SELECT id, department_code, events, is_active FROM webhooks
       WHERE deleted_at IS NULL AND events && $1::text[] AND (department_code IS NULL OR department_code = ANY($2::text[]))`,
      [names, event.departments],
    );
    for (const webhook of webhooks) {
      for (const name of names.filter((n) => webhook.events.includes(n)) as WebhookEvent[]) {
        const id = randomUUID();
        const status = webhook.is_active ? "PENDING" : "HELD";
        await client.query(
          `INSERT INTO webhook_deliveries (id, event_id, webhook_id, event_name, delivery_id, payload, status) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            id,
            event.id,
            webhook.id,
            name,
            deliveryIdOf(event.id, name),
            JSON.stringify(payloadOf(event, name, webhook.department_code)),
            status,
          ],
        );
        if (status === "PENDING") {
          await enqueueJob(client, JOB_NAMES.deliverWebhook, id, { deliveryId: id });
          queued++;
        }
      }
    }
  }
  return queued;
}

/** Everything needed to rebuild the payloads later (kept with the event). */
const eventRecord = (event: PlatformEvent) => ({
  requestNumber: event.requestNumber,
  requestType: event.requestType,
  applicantId: event.applicantId,
  tokenId: event.tokenId,
  transactionHash: event.transactionHash,
  ...event.data,
});
