/** The database handles stores and reads take: the pool, or the client of one open transaction. */
import type pg from "pg";

/** Anything that runs a query: the pool (each query on its own) or a transaction's client. */
export type Db = Pick<pg.Pool, "query">;
/** The client of an open transaction (what the chain gateway's onRecorded hands over). */
export type Tx = pg.PoolClient;
/** The pool itself, for what needs a connection of its own (a transaction, a session lock). */
export type DbPool = pg.Pool;
