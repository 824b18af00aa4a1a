import net from "node:net";
import { expect } from "chai";
import { readFile } from "node:fs/promises";
import { loadConfig, settings } from "../../api/src/config.ts";
import { assertPortFree } from "../../scripts/stack/ports.ts";

describe("configuration", function () {
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

  it("documents every variable in .env.example (npm run env:example regenerates it)", async function () {
    const example = await readFile(".env.example", "utf8");
    for (const setting of Object.values(settings)) {
      expect(example, setting.env).to.include(`# ${setting.env}=`);
      expect(example, setting.env).to.include(`# ${setting.doc}`);
    }
  });
});
