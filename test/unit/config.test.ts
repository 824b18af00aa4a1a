import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import {
  assertConfiguredSecrets,
  describeConfig,
  devConveniencesProblems,
  loadConfig,
  settings,
  weakSecretProblem,
} from "../../api/src/config.ts";
import { assertPortFree, freePort } from "../../scripts/stack/ports.ts";
import { startStack } from "../../scripts/stack/stack.ts";
import { runApiAlone } from "./support/runApiAlone.ts";

describe("loadConfig (api/src/config.ts)", function () {
  it("uses embedded defaults when nothing is set", function () {
    const config = loadConfig({});
    expect(config).to.include({
      nodeEnv: "development",
      host: "127.0.0.1",
      port: 3000,
      chainId: 31337,
      chainPort: 8545,
    });
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.chainRpcUrl).to.equal(undefined);
  });

  it("names every bad variable in one error", function () {
    expect(() => loadConfig({ PORT: "http", CHAIN_GAS_MODE: "cheap", MASTER_KEY: "abc" })).to.throw(
      /PORT must be an integer between 0 and 65535 \(got "http"\)[\s\S]*CHAIN_GAS_MODE must be one of market, free[\s\S]*MASTER_KEY must be 32 bytes of hex/,
    );
  });

  it("requires CHAIN_ID with CHAIN_RPC_URL", function () {
    expect(() => loadConfig({ CHAIN_RPC_URL: "http://besu:8545" })).to.throw(/CHAIN_ID is required with CHAIN_RPC_URL/);
  });

  it("refuses development conveniences in production", function () {
    expect(() => loadConfig({ NODE_ENV: "production" })).to.throw(
      /MASTER_KEY is required in production[\s\S]*DATABASE_URL is required in production[\s\S]*CHAIN_RPC_URL is required in production[\s\S]*development identity provider is refused/,
    );
  });

  it("says which port is taken and which variable moves it", async function () {
    const server = net.createServer().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const error = await assertPortFree(port, "API", "PORT").then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).to.equal(
        `Port ${port} (API) on 127.0.0.1 is already in use. Set PORT to a free port, e.g. PORT=${port + 100}.`,
      );
    } finally {
      server.close();
    }
  });

  it("reads the settings once read beside it (REQUIRE_SIGNED_REQUESTS, API_INSTANCE) like any other", function () {
    expect(loadConfig({})).to.include({ requireSignedRequests: false, apiInstance: undefined });
    expect(loadConfig({ REQUIRE_SIGNED_REQUESTS: "true", API_INSTANCE: "api-2" })).to.include({
      requireSignedRequests: true,
      apiInstance: "api-2",
    });
    expect(() => loadConfig({ REQUIRE_SIGNED_REQUESTS: "yes" })).to.throw(
      /REQUIRE_SIGNED_REQUESTS must be true or false \(got "yes"\)/,
    );
  });

  it("keeps JOB_TIME_SCALE, the tests' accelerated job clock, at 1 in production", function () {
    expect(() => loadConfig({ NODE_ENV: "production", JOB_TIME_SCALE: "0.5" })).to.throw(
      /JOB_TIME_SCALE must be 1 in production/,
    );
    expect(() => loadConfig({ JOB_TIME_SCALE: "0" })).to.throw(/JOB_TIME_SCALE must be a number in \(0, 1\]/);
  });

  it("documents every variable in .env.example (npm run env:example regenerates it)", async function () {
    const example = await readFile(".env.example", "utf8");
    for (const setting of Object.values(settings)) {
      expect(example, setting.env).to.include(`# ${setting.env}=`);
      expect(example, setting.env).to.include(`# ${setting.doc}`);
    }
  });

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

  describe("refusals at start (API, supervisor)", function () {
    this.timeout(60_000);

    it("refuses DEV_CONVENIENCES behind a proxy, with a public PUBLIC_BASE_URL or an identity provider, naming each, and generates nothing", async function () {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), "dev-refused-"));
      try {
        const { code, output } = await runApiAlone({
          DATA_DIR: dataDir,
          PORT: "0",
          DEV_CONVENIENCES: "true",
          TRUST_PROXY_HOPS: "1",
          PUBLIC_BASE_URL: "https://licences.example.org",
          IDENTITY_PROVIDER_AUTHORIZE_URL: "https://id.example.org/authorize",
        });
        expect(code).to.not.equal(0);
        expect(output).to.match(/refused with TRUST_PROXY_HOPS=1: the API is behind a reverse proxy/);
        expect(output).to.match(/refused with PUBLIC_BASE_URL=https:\/\/licences\.example\.org/);
        expect(output).to.match(/refused with an identity provider configured \(IDENTITY_PROVIDER_AUTHORIZE_URL\)/);
        expect(output).to.not.match(/API listening/);
        expect(await readdir(dataDir)).to.deep.equal([]);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it("npm start's supervisor without DEV_CONVENIENCES refuses missing secrets before it starts or generates anything", async function () {
      const own = await mkdtemp(path.join(os.tmpdir(), "supervisor-secrets-"));
      try {
        const env = {
          DATA_DIR: own,
          DEV_CONVENIENCES: "false",
          PORT: String(await freePort()),
          CHAIN_PORT: String(await freePort()),
          EMBEDDED_PG_PORT: String(await freePort()),
          INDEXER_PORT: String(await freePort()),
          DATABASE_URL: "",
          CHAIN_RPC_URL: "",
          ADMIN_CLIENT_ID: "ops-admin",
          ADMIN_CLIENT_SECRET: randomBytes(32).toString("hex"),
        };
        const refusal = await startStack({ env, log: () => {} }).then(
          async (stack) => {
            await stack.stop();
            return undefined;
          },
          (error: Error) => error,
        );
        expect(refusal?.message).to.match(/MASTER_KEY is required \(or DEV_CONVENIENCES=true/);
        expect(await readdir(path.join(own, "secrets")).catch(() => [])).to.deep.equal([]);
        expect(await readdir(own)).to.not.include("postgres");
      } finally {
        await rm(own, { recursive: true, force: true });
      }
    });
  });
});
