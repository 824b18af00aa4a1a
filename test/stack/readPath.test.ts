import { expect } from "chai";
import type pg from "pg";
import { createPool } from "../../api/src/db/pool.ts";
import { asDate, readTogether } from "../../api/src/db/readTogether.ts";
import { current } from "./support/stackFixture.ts";

/** The read path's database helpers, on the stack's Postgres, in a scratch schema of their own. */
describe("read path: prepared statements and combined reads", function () {
  const schema = "read_path_test";
  let pool: pg.Pool;

  before(async function () {
    // One connection, so every query below runs on the same backend and sees its prepared statements.
    pool = createPool(current().databaseUrl, schema, 1);
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(
      `CREATE TABLE ${schema}.items (id int PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL, tags jsonb NOT NULL)`,
    );
    await pool.query(
      `INSERT INTO ${schema}.items VALUES (1, 'one', '2026-01-02T03:04:05.678Z', '["a"]'), (2, 'two', '2026-02-03T04:05:06Z', '[]'), (3, 'three', '2026-03-04T05:06:07Z', '{"k": 1}')`,
    );
  });

  after(async function () {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it("runs a parameterised pool query as a named prepared statement, once per connection", async function () {
    const text = "SELECT name FROM items WHERE id = $1";
    expect((await pool.query(text, [1])).rows).to.deep.equal([{ name: "one" }]);
    expect((await pool.query(text, [2])).rows).to.deep.equal([{ name: "two" }]);
    const { rows } = await pool.query("SELECT name, statement FROM pg_prepared_statements WHERE statement = $1", [
      text,
    ]);
    expect(rows).to.have.length(1);
    expect(rows[0].name).to.match(/^q_[\w-]{24}$/);
  });

  it("still answers when a view under a prepared statement changes its columns", async function () {
    await pool.query(`CREATE VIEW ${schema}.v AS SELECT id, name FROM ${schema}.items`);
    const text = "SELECT * FROM v ORDER BY id LIMIT $1";
    expect((await pool.query(text, [1])).rows).to.deep.equal([{ id: 1, name: "one" }]);
    // What an indexer that swaps its schema does to the views the API reads.
    await pool.query(`DROP VIEW ${schema}.v`);
    await pool.query(`CREATE VIEW ${schema}.v AS SELECT id, name, upper(name) AS shout FROM ${schema}.items`);
    expect((await pool.query(text, [1])).rows).to.deep.equal([{ id: 1, name: "one", shout: "ONE" }]);
    expect((await pool.query(text, [2])).rows).to.have.length(2);
  });

  it("reads several parts in one statement, each with its own parameters, in order", async function () {
    const rows = await readTogether(pool, {
      byId: { sql: "SELECT id, name, at, tags FROM items WHERE id = $1", params: [1] },
      range: { sql: "SELECT id FROM items WHERE id >= $1 AND id <= $2 ORDER BY id DESC", params: [2, 3] },
      none: { sql: "SELECT id FROM items WHERE name = $1", params: ["nobody"] },
      constant: { sql: "SELECT count(*)::int AS n FROM items", params: [] },
    });
    expect(rows.byId).to.have.length(1);
    expect(rows.byId[0]).to.include({ id: 1, name: "one" });
    expect(rows.byId[0].tags).to.deep.equal(["a"]);
    expect(asDate(rows.byId[0].at).toISOString()).to.equal("2026-01-02T03:04:05.678Z");
    expect(rows.range.map((r) => r.id)).to.deep.equal([3, 2]);
    expect(rows.none).to.deep.equal([]);
    expect(rows.constant).to.deep.equal([{ n: 3 }]);
  });

  it("keeps a plain query's Date as it is", function () {
    const date = new Date("2026-05-06T07:08:09Z");
    expect(asDate(date)).to.equal(date);
  });
});
