import { expect } from "chai";
import { describeConfig, loadConfig } from "../../api/src/config.ts";

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

  describe("the logged configuration (L6)", function () {
    it("shows an RPC or identity provider URL without its credentials, path or query (where providers put API keys)", function () {
      const config = loadConfig({
        CHAIN_RPC_URL: "https://rpc-user:pa55word@mainnet.example.io/v3/0123456789abcdef?apikey=topsecret",
        CHAIN_ID: "1",
        IDENTITY_PROVIDER_AUTHORIZE_URL: "https://id.example.org/oauth/authorize?tenant=key-in-query",
        PUBLIC_BASE_URL: "https://licences.example.org",
      });
      const shown = describeConfig(config);
      expect(shown).to.include({
        CHAIN_RPC_URL: "https://***:***@mainnet.example.io/***",
        IDENTITY_PROVIDER_AUTHORIZE_URL: "https://id.example.org/***",
        PUBLIC_BASE_URL: "https://licences.example.org",
      });
      const text = JSON.stringify(shown);
      for (const secret of ["rpc-user", "pa55word", "0123456789abcdef", "topsecret", "key-in-query"])
        expect(text).to.not.include(secret);
    });
  });
});
