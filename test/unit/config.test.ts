import { expect } from "chai";
import { randomBytes } from "node:crypto";
import {
  assertConfiguredSecrets,
  describeConfig,
  devConveniencesProblems,
  loadConfig,
  weakSecretProblem,
} from "../../api/src/config.ts";

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

  describe("the logged configuration", function () {
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
  describe("DEV_CONVENIENCES (passwordless sign-in) only on a local stack", function () {
    const on = { DEV_CONVENIENCES: "true" };

    it("is refused with a PUBLIC_BASE_URL that is not loopback, naming it", function () {
      expect(() => loadConfig({ ...on, PUBLIC_BASE_URL: "https://licences.example.org" })).to.throw(
        /DEV_CONVENIENCES .* is refused with PUBLIC_BASE_URL=https:\/\/licences\.example\.org/,
      );
      expect(() => loadConfig({ ...on, PUBLIC_BASE_URL: "http://10.0.0.5:3000" })).to.throw(/PUBLIC_BASE_URL=/);
    });

    it("is refused behind a reverse proxy (TRUST_PROXY_HOPS above 0), naming it", function () {
      expect(() => loadConfig({ ...on, TRUST_PROXY_HOPS: "1" })).to.throw(
        /DEV_CONVENIENCES .* is refused with TRUST_PROXY_HOPS=1: the API is behind a reverse proxy/,
      );
    });

    for (const variable of [
      "IDENTITY_PROVIDER_AUTHORIZE_URL",
      "IDENTITY_PROVIDER_TOKEN_URL",
      "IDENTITY_PROVIDER_USERINFO_URL",
      "IDENTITY_PROVIDER_CLIENT_ID",
      "IDENTITY_PROVIDER_CLIENT_SECRET",
    ]) {
      it(`is refused with ${variable} set (a real identity provider), naming it`, function () {
        const value = variable.endsWith("_URL") ? "https://id.example.org/x" : "licence-platform";
        expect(() => loadConfig({ ...on, [variable]: value })).to.throw(
          new RegExp(`DEV_CONVENIENCES .* is refused with an identity provider configured \\(${variable}\\)`),
        );
      });
    }

    it("is accepted on loopback: a loopback PUBLIC_BASE_URL, no proxy, no identity provider", function () {
      for (const base of ["http://127.0.0.1:3000", "http://localhost:8080", "http://[::1]:3000", undefined]) {
        const config = loadConfig({ ...on, ...(base ? { PUBLIC_BASE_URL: base } : {}), TRUST_PROXY_HOPS: "0" });
        expect(config.devConveniences).to.equal(true);
        expect(devConveniencesProblems(config)).to.deep.equal([]);
      }
    });
  });

  describe("ADMIN_CLIENT_SECRET strength", function () {
    const strong = randomBytes(32).toString("hex");

    it("accepts generated secrets (openssl rand -hex 32, the embedded stack's, base64url)", function () {
      for (let i = 0; i < 200; i++) {
        expect(weakSecretProblem(randomBytes(16).toString("hex"))).to.equal(undefined);
        expect(weakSecretProblem(randomBytes(24).toString("hex"))).to.equal(undefined);
        expect(weakSecretProblem(randomBytes(24).toString("base64url"))).to.equal(undefined);
      }
    });

    it("refuses short, repetitive, sequential, numeric-only and well-known secrets", function () {
      const refused: [string, RegExp][] = [
        ["short-but-random-Xq9!", /21 characters, at least 32/],
        ["correct-horse-battery-staple-password-2024", /contains "password"/],
        ["changemechangemechangemechangeme", /contains "changeme"/],
        ["abcdefabcdefabcdefabcdefabcdefab", /fewer than 8 distinct|repeats/],
        ["x7Yq".repeat(8), /repeats a shorter string/],
        ["abcdefghijklmnopqrstuvwxyz012345", /runs of neighbouring/],
        ["1928374650192837465019283746501", /31 characters/],
        ["19283746501928374650192837465019", /repeats|bits by estimate/],
        ["50284719362058147396205814739625", /about 106 bits by estimate, at least 128/],
      ];
      for (const [secret, reason] of refused) expect(weakSecretProblem(secret), secret).to.match(reason);
      expect(weakSecretProblem(`ops-${strong}`, "ops")).to.match(/contains ADMIN_CLIENT_ID/);
    });

    it("is refused at start in production with a message naming it; accepted when strong", function () {
      const production = { NODE_ENV: "production", ADMIN_CLIENT_ID: "ops-admin" };
      expect(() => loadConfig({ ...production, ADMIN_CLIENT_SECRET: "hunter2hunter2" })).to.throw(
        /ADMIN_CLIENT_SECRET is too weak for production: it has 14 characters, at least 32/,
      );
      expect(() => loadConfig({ ...production, ADMIN_CLIENT_SECRET: strong })).to.not.throw(/ADMIN_CLIENT_SECRET/);
    });

    it("is refused without DEV_CONVENIENCES whatever NODE_ENV says, and not checked on a local development stack", function () {
      const weak = { ADMIN_CLIENT_ID: "ops-admin", ADMIN_CLIENT_SECRET: "hunter2hunter2" };
      expect(() => assertConfiguredSecrets(loadConfig({ NODE_ENV: "test", ...weak }))).to.throw(
        /ADMIN_CLIENT_SECRET is too weak: it has 14 characters/,
      );
      expect(() => assertConfiguredSecrets(loadConfig({ DEV_CONVENIENCES: "true", ...weak }))).to.not.throw();
    });
  });

  describe("METRICS_TOKEN", function () {
    it("is required in production (/metrics is never public there)", function () {
      expect(() => loadConfig({ NODE_ENV: "production" })).to.throw(/METRICS_TOKEN is required in production/);
      expect(() => loadConfig({ NODE_ENV: "production", METRICS_TOKEN: "scraper-token" })).to.not.throw(
        /METRICS_TOKEN/,
      );
      expect(loadConfig({}).metricsToken).to.equal(undefined); // development: optional
    });
  });
});
