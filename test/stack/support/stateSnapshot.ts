/**
 * Everything a request could change, in one comparable value, for the "nothing changed on a 4xx" property of the
 * fuzz tests: every table of the API's schema (row count and a digest of the rows' contents), the chain (block
 * number, the nonce of every custodial wallet: operator, keeper, departments) and the files on disk (stored
 * documents and temporary uploads).
 *
 * Background work (receipts, event derivation, webhook deliveries and their retries, stage-timeout jobs of other
 * tests) can change some of these on its own; `backgroundOnly` tells such differences apart so the caller can
 * re-check them in a quiet moment, and `quiesce` waits for such a moment.
 *
 * Digesting every table on every snapshot was most of the fuzz suite's time, so a statement-level trigger on each
 * compared table notes the writing transaction's id, and a snapshot re-digests only the tables written by a
 * transaction that may have committed since the previous one, in one call of a SQL function (see `init`).
 */
import { readdir } from "node:fs/promises";
import pg from "pg";

export interface TableState {
  rows: number;
  digest: string;
}

export interface Snapshot {
  tables: Record<string, TableState>;
  blockNumber: number;
  /** Pending-block nonce of each custodial wallet (lower-case address). */
  nonces: Record<string, number>;
  /** Number of files under each watched directory. */
  files: Record<string, number>;
}

/**
 * Tables left out of the comparison, each with the reason it may legitimately change while a request is refused.
 * Everything else in schema `app` is compared.
 */
export const EXCLUDED_TABLES: Record<string, string> = {
  // Agenda's working table: the job runner locks, reschedules, finishes and retries rows on its own clock (jobs of
  // earlier, successful writes and of other tests). A job a request would enqueue is always written in the same
  // database transaction as a row of a compared table (events, webhook_deliveries, chain_transactions), so a
  // rejected request that enqueued work would still be caught there.
  agenda_jobs: "job queue bookkeeping, changed by the job runner on its own schedule",
  // Idempotency-Key bookkeeping: a 4xx answered under an Idempotency-Key is stored on purpose, so that a retry with
  // the same key replays it (api/src/http/idempotency.ts; a 5xx frees the key). The fuzz sends random keys.
  idempotency_keys: "stores 4xx outcomes under an Idempotency-Key by design, for replays",
  // Rate limits count every request, refused ones included (api/src/http/rateLimit.ts).
  rate_limit_buckets: "counts every request by design, rejected ones too",
};

/**
 * Rows of a compared table that background work writes, left out of its count and digest. Jobs audit what they do
 * (a stage timeout, a webhook disabled after its last retry) without an HTTP request id; every row a request
 * writes carries its X-Request-Id, so those are still compared (and the caller also looks them up by id).
 */
const TABLE_FILTERS: Record<string, string> = {
  audit_logs: "request_id IS NOT NULL",
};

/**
 * Tables (and the chain) that background work changes without any request: a difference limited to these is
 * re-checked by the caller (quiesce, replay the request, compare again) instead of failing at once.
 * - chain_transactions: the receipt watcher confirms PENDING rows, reconcile re-broadcasts;
 * - events, webhook_deliveries, webhook_logs: derived and delivered by jobs after confirmations;
 * - webhooks: a delivery job disables a webhook after its last failed retry (digest only: rows are never added by
 *   background work, so a changed row count is still a failure);
 * - wallets: reconcile moves a wallet's next nonce forward when the chain is ahead.
 */
const BACKGROUND_TABLES = new Set(["chain_transactions", "events", "webhook_deliveries", "webhook_logs", "wallets"]);
const BACKGROUND_DIGEST_ONLY = new Set(["webhooks"]);

/** Where the probe's triggers note which transaction wrote which table, and its `take` function. */
const PROBE_SCHEMA = "state_probe";

export class StateProbe {
  readonly #pool: pg.Pool;
  readonly #rpcUrl: string;
  readonly #directories: string[];
  readonly #schema: string;
  #tables: string[] = [];
  /** The last digests, and the oldest transaction still running when they were taken (see `init`). */
  #digests: Record<string, TableState> = {};
  #horizon: string | null = null;

  constructor(databaseUrl: string, rpcUrl: string, directories: string[], schema = "app") {
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`unexpected schema name ${schema}`);
    this.#schema = schema;
    this.#pool = new pg.Pool({ connectionString: databaseUrl, max: 3, options: `-c search_path=${schema}` });
    this.#pool.on("error", () => {}); // idle connections cut by a Postgres restart
    this.#rpcUrl = rpcUrl;
    this.#directories = directories;
  }

  get pool(): pg.Pool {
    return this.#pool;
  }

  /** The compared tables (schema `app`, base tables, minus EXCLUDED_TABLES). */
  get tables(): string[] {
    return [...this.#tables];
  }

  async init(): Promise<void> {
    const { rows } = await this.#pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
      [this.#schema],
    );
    this.#tables = rows.map((r) => r.table_name).filter((name) => !(name in EXCLUDED_TABLES));
    if (this.#tables.length === 0) throw new Error(`no tables found in schema ${this.#schema}`);
    const literal = (value: unknown) => pg.escapeLiteral(JSON.stringify(value));
    // take(since) gives the count and an order-independent digest of the rows of every table on the first call
    // (since null); then of those written by a transaction whose id is at or past `since`, the previous call's
    // horizon. A transaction below it had completed before the previous digests were taken, so they include it; one
    // at or past it that has committed since has its note visible now, and one still running is past the new
    // horizon too, which is read before the digests. SECURITY DEFINER on note_write: the API's own role writes the
    // tables and needs no rights on the probe's schema.
    await this.#pool.query(`CREATE SCHEMA IF NOT EXISTS ${PROBE_SCHEMA};
      CREATE TABLE IF NOT EXISTS ${PROBE_SCHEMA}.writes (xid xid8 NOT NULL, table_name text NOT NULL);
      CREATE OR REPLACE FUNCTION ${PROBE_SCHEMA}.note_write() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog AS $$
        BEGIN
          INSERT INTO ${PROBE_SCHEMA}.writes VALUES (pg_current_xact_id(), TG_TABLE_NAME);
          RETURN NULL;
        END $$;
      ${this.#tables.map((name) => `CREATE OR REPLACE TRIGGER state_probe AFTER INSERT OR UPDATE OR DELETE ON ${this.#ident(name)} FOR EACH STATEMENT EXECUTE FUNCTION ${PROBE_SCHEMA}.note_write();`).join("\n")}
      CREATE OR REPLACE FUNCTION ${PROBE_SCHEMA}.take(since xid8) RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
          horizon xid8;
          tables jsonb := '{}';
          tbl text;
          state jsonb;
        BEGIN
          horizon := pg_snapshot_xmin(pg_current_snapshot());
          FOR tbl IN SELECT t FROM jsonb_array_elements_text(${literal(this.#tables)}) t
                     WHERE since IS NULL OR t IN (SELECT table_name FROM ${PROBE_SCHEMA}.writes WHERE xid >= since) LOOP
            EXECUTE format('SELECT jsonb_build_object(''rows'', count(*), ''digest'',
                md5(coalesce(string_agg(md5(r::text), '''' ORDER BY md5(r::text)), ''''))) FROM %I.%I r WHERE %s',
              ${pg.escapeLiteral(this.#schema)}, tbl, coalesce(${literal(TABLE_FILTERS)}::jsonb ->> tbl, 'true'))
              INTO state;
            tables := tables || jsonb_build_object(tbl, state);
          END LOOP;
          DELETE FROM ${PROBE_SCHEMA}.writes WHERE xid < horizon;
          RETURN jsonb_build_object('horizon', horizon::text, 'tables', tables);
        END $$;`);
  }

  #ident(name: string): string {
    return `${pg.escapeIdentifier(this.#schema)}.${pg.escapeIdentifier(name)}`;
  }

  async take(): Promise<Snapshot> {
    const [{ rows }, chain, files] = await Promise.all([
      this.#pool.query<{ s: { horizon: string; tables: Record<string, TableState> } }>(
        `SELECT ${PROBE_SCHEMA}.take($1) AS s`,
        [this.#horizon],
      ),
      this.#chainState(),
      this.#fileCounts(),
    ]);
    Object.assign(this.#digests, rows[0].s.tables);
    this.#horizon = rows[0].s.horizon;
    return { tables: { ...this.#digests }, ...chain, files };
  }

  async #chainState(): Promise<{ blockNumber: number; nonces: Record<string, number> }> {
    const { rows } = await this.#pool.query<{ address: string }>(`SELECT address FROM wallets ORDER BY address`);
    const addresses = rows.map((r) => r.address.toLowerCase());
    const batch = [
      { jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] },
      ...addresses.map((address, i) => ({
        jsonrpc: "2.0",
        id: i + 1,
        method: "eth_getTransactionCount",
        params: [address, "pending"],
      })),
    ];
    const response = await fetch(this.#rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch),
    });
    const answers = (await response.json()) as { id: number; result?: string; error?: unknown }[];
    const byId = new Map(answers.map((a) => [a.id, a]));
    const value = (id: number) => {
      const answer = byId.get(id);
      if (!answer || answer.result === undefined)
        throw new Error(`RPC answer ${id} missing: ${JSON.stringify(answer)}`);
      return Number(BigInt(answer.result));
    };
    return {
      blockNumber: value(0),
      nonces: Object.fromEntries(addresses.map((address, i) => [address, value(i + 1)])),
    };
  }

  async #fileCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const dir of this.#directories) {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
      counts[dir] = entries.filter((e) => e.isFile()).length;
    }
    return counts;
  }

  /** Every difference between two snapshots, in words. */
  static diff(a: Snapshot, b: Snapshot): string[] {
    const out: string[] = [];
    for (const name of new Set([...Object.keys(a.tables), ...Object.keys(b.tables)])) {
      const x = a.tables[name];
      const y = b.tables[name];
      if (!x || !y) out.push(`table ${name}: ${x ? "disappeared" : "appeared"}`);
      else if (x.rows !== y.rows) out.push(`table ${name}: rows ${x.rows} → ${y.rows}`);
      else if (x.digest !== y.digest) out.push(`table ${name}: contents changed (same ${x.rows} rows)`);
    }
    if (a.blockNumber !== b.blockNumber) out.push(`chain: block ${a.blockNumber} → ${b.blockNumber}`);
    for (const address of new Set([...Object.keys(a.nonces), ...Object.keys(b.nonces)])) {
      if (a.nonces[address] !== b.nonces[address])
        out.push(`chain: nonce of ${address} ${a.nonces[address]} → ${b.nonces[address]}`);
    }
    for (const dir of Object.keys(a.files)) {
      if (a.files[dir] !== b.files[dir]) out.push(`files under ${dir}: ${a.files[dir]} → ${b.files[dir]}`);
    }
    return out;
  }

  /** True when every difference is one background work can cause on its own (see BACKGROUND_TABLES). */
  static backgroundOnly(a: Snapshot, b: Snapshot): boolean {
    for (const name of Object.keys(a.tables)) {
      const x = a.tables[name];
      const y = b.tables[name];
      if (!y) return false;
      if (x.rows === y.rows && x.digest === y.digest) continue;
      if (BACKGROUND_TABLES.has(name)) continue;
      if (BACKGROUND_DIGEST_ONLY.has(name) && x.rows === y.rows) continue;
      return false;
    }
    if (Object.keys(a.files).some((dir) => a.files[dir] !== b.files[dir])) return false;
    // New wallets come only from requests (department registration).
    if (Object.keys(a.nonces).length !== Object.keys(b.nonces).length) return false;
    return true;
  }

  /** Audit records written under this X-Request-Id (every state change is audited with its request id). */
  async auditRecords(requestId: string): Promise<number> {
    const { rows } = await this.#pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_logs WHERE request_id = $1`,
      [requestId],
    );
    return rows[0].n;
  }

  /**
   * Waits until background work has settled: no transaction PENDING, no job running or due within 2 s, and two
   * consecutive snapshots equal. Gives up after `timeoutMs` (returns false) rather than hang the test.
   */
  async quiesce(timeoutMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let previous: Snapshot | undefined;
    while (Date.now() < deadline) {
      const { rows } = await this.#pool.query<{ pending: number; busy: number }>(
        `SELECT (SELECT count(*)::int FROM chain_transactions WHERE status = 'PENDING') AS pending,
                (SELECT count(*)::int FROM agenda_jobs
                  WHERE disabled IS NOT TRUE
                    AND (locked_at IS NOT NULL OR (next_run_at IS NOT NULL AND next_run_at <= now() + interval '2 seconds'))) AS busy`,
      );
      if (rows[0].pending === 0 && rows[0].busy === 0) {
        const snapshot = await this.take();
        if (previous && StateProbe.diff(previous, snapshot).length === 0) return true;
        previous = snapshot;
      } else {
        previous = undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    return false;
  }

  async close(): Promise<void> {
    // Later suites share this database: leave its tables as the API created them.
    await this.#pool
      .query(
        `${this.#tables.map((name) => `DROP TRIGGER IF EXISTS state_probe ON ${this.#ident(name)};`).join("\n")}
         DROP SCHEMA IF EXISTS ${PROBE_SCHEMA} CASCADE`,
      )
      .catch(() => {});
    await this.#pool.end();
  }
}
