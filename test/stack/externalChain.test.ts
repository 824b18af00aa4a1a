import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { Wallet } from "ethers";
import pg from "pg";
import { anvilBinary, rpc } from "../../scripts/stack/localChain.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { REPO_ROOT, startStack, type Stack } from "../../scripts/stack/stack.ts";
import { current } from "./support/stackFixture.ts";
import { createDriver } from "./support/platformDriver.ts";

const run = promisify(execFile);

/**
 * The production path: an external chain (here a separate anvil with free gas, standing in for Besu with
 * zeroBaseFee), an external Postgres (the fixture's server, a database of its own: the views schema is always
 * `index`, so two stacks never share a database), a deployment file, and keys from the environment.
 */
describe("external chain and database (the Besu path)", function () {
  let chain: ChildProcess;
  let stack: Stack | undefined;
  let dir: string;
  const database = `external_${process.pid}_${Date.now()}`;
  const onServer = async (sql: string) => {
    const admin = new pg.Client({ connectionString: current().databaseUrl });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };

  after(async () => {
    await stack?.stop();
    chain?.kill("SIGTERM");
    if (dir) await rm(dir, { recursive: true, force: true });
    await onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it("uses CHAIN_RPC_URL, DEPLOYMENT_FILE and DATABASE_URL, starts no local chain, and sends with gas price 0", async function () {
    dir = await mkdtemp(path.join(os.tmpdir(), "external-chain-"));
    const chainPort = await freePort();
    const rpcUrl = `http://127.0.0.1:${chainPort}`;
    chain = spawn(
      anvilBinary(),
      [
        "--host",
        "127.0.0.1",
        "--port",
        String(chainPort),
        "--chain-id",
        "1337",
        "--hardfork",
        "london",
        "--base-fee",
        "0",
        "--gas-price",
        "0",
        "--silent",
      ],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 100; i++) {
      if (
        await rpc(rpcUrl, "eth_chainId", []).then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const operator = Wallet.createRandom();
    const admin = Wallet.createRandom();
    // Governance is the deployer, a key this test holds (docs/besu.md): it keeps DEFAULT_ADMIN_ROLE, and the API is
    // given it (GOVERNANCE_PRIVATE_KEY) to register departments and workflows, as a single-key network would.
    const deployer = Wallet.createRandom();
    const deploymentFile = path.join(dir, "besu.json");
    await run(
      process.execPath,
      [
        path.join(REPO_ROOT, "node_modules", "hardhat", "dist", "src", "cli.js"),
        "run",
        "--no-compile",
        "scripts/deploy.ts",
        "--network",
        "besu",
      ],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          BESU_RPC_URL: rpcUrl,
          BESU_CHAIN_ID: "1337",
          BESU_DEPLOYER_KEY: deployer.privateKey,
          DEPLOYMENT_FILE: deploymentFile,
          IGNITION_DIR: path.join(dir, "ignition"),
          DEPLOYMENT_ID: "external",
          OPERATOR_ADDRESS: operator.address,
          ADMIN_ADDRESS: admin.address,
          KEEPER_ADDRESS: operator.address,
        },
      },
    );

    await onServer(`CREATE DATABASE ${database}`);
    const databaseUrl = new URL(current().databaseUrl);
    databaseUrl.pathname = `/${database}`;
    stack = await startStack({
      log: () => {},
      env: {
        NODE_ENV: "test",
        DATA_DIR: path.join(dir, "data"),
        DATABASE_URL: databaseUrl.href,
        API_DB_SCHEMA: "app_external",
        CHAIN_RPC_URL: rpcUrl,
        CHAIN_ID: "1337",
        CHAIN_GAS_MODE: "free",
        DEPLOYMENT_FILE: deploymentFile,
        OPERATOR_PRIVATE_KEY: operator.privateKey,
        ADMIN_WALLET_PRIVATE_KEY: admin.privateKey,
        GOVERNANCE_PRIVATE_KEY: deployer.privateKey,
        MASTER_KEY: `0x${"42".repeat(32)}`,
        PORT: String(await freePort()),
        INDEXER_PORT: String(await freePort()),
        CHAIN_PORT: String(chainPort), // taken by the external chain: must not be used
        LOG_LEVEL: "warn",
      },
    });
    expect(stack.chain).to.equal(undefined);
    expect(stack.rpcUrl).to.equal(rpcUrl);
    expect(stack.operatorAddress).to.equal(operator.address);

    const driver = await createDriver(stack);
    try {
      // The operator holds no ether at all: free gas, nothing funded.
      expect(await driver.core.provider.getBalance(operator.address)).to.equal(0n);
      const tx = await driver.registerCode("EXTERNAL");
      expect(tx.receipt.from, "registered by governance").to.equal(deployer.address);
      const sent = await driver.core.provider.getTransaction(tx.hash);
      expect(sent!.gasPrice).to.equal(0n);
      expect(tx.receipt.status).to.equal(1);
      const { rows } = await driver.index.query(`SELECT code FROM index.departments WHERE code = 'EXTERNAL'`);
      expect(rows).to.have.length(1);
      const health = await fetch(`${stack.api.url}/health`);
      expect(health.status).to.equal(200);
    } finally {
      await driver.close();
    }
  });
});
