import { expect } from "chai";
import { loadConfig } from "../../api/src/config.ts";

describe("loadConfig (api/src/config.ts)", function () {
  describe("INDEX_VIEWS_SCHEMA (retired: the views schema is always index)", function () {
    it("refuses another views schema rather than ignore it", function () {
      expect(() => loadConfig({ INDEX_VIEWS_SCHEMA: "index_external" })).to.throw(
        /INDEX_VIEWS_SCHEMA is no longer a setting: the indexer's views are always in schema index/,
      );
    });

    it("accepts it unset or set to index, and has no such setting", function () {
      for (const env of [{}, { INDEX_VIEWS_SCHEMA: "index" }, { INDEX_VIEWS_SCHEMA: "" }]) {
        const config = loadConfig(env);
        expect(config).to.not.have.property("indexViewsSchema");
      }
    });
  });
});
