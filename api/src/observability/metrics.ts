/** Prometheus metrics: request latency by route, outbox transactions by status, indexer lag in blocks. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly outboxTransitions = new Counter({
    name: "outbox_transactions_total",
    help: "Outbox transactions entering each status, by kind",
    labelNames: ["status", "kind"] as const,
    registers: [this.registry],
  });
  readonly outboxByStatus = new Gauge({
    name: "outbox_transactions",
    help: "Outbox transactions currently in each status",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });
  readonly indexerLag = new Gauge({
    name: "indexer_lag_blocks",
    help: "Blocks between the chain head and the last block the indexer processed",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
