/**
 * The remote signer (SIGNER=remote): keys held by a JSON-RPC signer speaking eth_accounts / eth_signTransaction
 * (as Web3Signer, EthSigner and Clef do), here a small one started by the test (support/remoteSignerServer.ts).
 * First RemoteSigner alone against that server (what it sends, what it refuses), then an API process of the
 * running stack in remote mode: a department registered with a key of the signer, and a request created,
 * documented, submitted and approved, every transaction signed by the signer, no key of it in the database.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Interface, Transaction, Wallet, getAddress, zeroPadValue } from "ethers";
import { LicenceTokenAbi } from "../../abis/index.ts";
import { approvalRegistry } from "../../api/src/chain/contracts.ts";
import { describeConfig, loadConfig } from "../../api/src/config.ts";
import { RemoteSigner, RemoteSignerError } from "../../api/src/chain/remoteSigner.ts";
import type { SignableTransaction } from "../../api/src/chain/transactionSigner.ts";
import { createPool } from "../../api/src/db/pool.ts";
import type { AppError } from "../../api/src/domain/errors.ts";
import { answerOfKnownError } from "../../api/src/http/errorKinds.ts";
import { rpc } from "../../scripts/stack/localChain.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { startStack, type ApiHandle, type Stack } from "../../scripts/stack/stack.ts";
import { applicantToken } from "./support/authClient.ts";
import { departmentClient } from "./support/departmentClient.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { startRemoteSignerServer, type RemoteSignerServer } from "./support/remoteSignerServer.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

const AUTH = `Bearer ${randomBytes(16).toString("hex")}`;

/** The RemoteSignerError a call fails with, as the API answers it (a chain error: http/errorKinds.ts gives its status). */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a RemoteSignerError").to.be.instanceOf(RemoteSignerError);
  return answerOfKnownError(error)!;
}

describe("remote signer (eth_accounts / eth_signTransaction)", function () {
  describe("configuration", function () {
    it("keeps the key vault by default; SIGNER=remote needs REMOTE_SIGNER_URL and OPERATOR_ADDRESS and refuses OPERATOR_PRIVATE_KEY", function () {
      expect(loadConfig({}).signer).to.equal("local");
      expect(() => loadConfig({ SIGNER: "remote" })).to.throw(
        /REMOTE_SIGNER_URL is required with SIGNER=remote[\s\S]*OPERATOR_ADDRESS \(a key of the remote signer\) is required with SIGNER=remote/,
      );
      expect(() =>
        loadConfig({
          SIGNER: "remote",
          REMOTE_SIGNER_URL: "ftp://signer",
          OPERATOR_ADDRESS: Wallet.createRandom().address,
        }),
      ).to.throw(/REMOTE_SIGNER_URL must be an http or https URL/);
      expect(() =>
        loadConfig({
          SIGNER: "remote",
          REMOTE_SIGNER_URL: "http://signer:9000",
          OPERATOR_ADDRESS: Wallet.createRandom().address,
          OPERATOR_PRIVATE_KEY: `0x${"11".repeat(32)}`,
        }),
      ).to.throw(/OPERATOR_PRIVATE_KEY cannot be set with SIGNER=remote/);
      expect(() => loadConfig({ SIGNER: "hsm" })).to.throw(/SIGNER must be one of local, remote/);
    });

    it("never shows REMOTE_SIGNER_AUTH or credentials in REMOTE_SIGNER_URL in the logged configuration", function () {
      const config = loadConfig({
        SIGNER: "remote",
        REMOTE_SIGNER_URL: "https://api:pa55word@signer.example:9000",
        REMOTE_SIGNER_AUTH: AUTH,
        OPERATOR_ADDRESS: Wallet.createRandom().address,
      });
      const shown = JSON.stringify(describeConfig(config));
      expect(shown).to.not.include(AUTH.slice(7)).and.not.include("pa55word");
      expect(describeConfig(config)).to.include({
        SIGNER: "remote",
        REMOTE_SIGNER_URL: "https://***:***@signer.example:9000",
      });
    });
  });

  describe("RemoteSigner against a signer server", function () {
    let server: RemoteSignerServer;
    let signer: RemoteSigner;
    const to = Wallet.createRandom().address;
    const asked = (overrides: Partial<SignableTransaction> = {}): SignableTransaction =>
      ({
        type: 2,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
        from: server.addresses[0],
        to,
        data: "0x12345678aabb",
        nonce: 7n,
        gasLimit: 210_000n,
        chainId: 31337,
        ...overrides,
      }) as SignableTransaction;

    before(async () => {
      server = await startRemoteSignerServer({ count: 2, authorization: AUTH });
      signer = new RemoteSigner({ url: server.url, authorization: AUTH });
    });
    afterEach(() => (server.misbehave = "none"));
    after(async () => server?.stop());

    it("lists the signer's keys with eth_accounts, sending the configured Authorization header", async function () {
      expect(await signer.addresses()).to.deep.equal(server.addresses);
      const call = server.calls.at(-1)!;
      expect(call.method).to.equal("eth_accounts");
      expect(call.authorization).to.equal(AUTH);
    });

    it("signs EIP-1559 and legacy transactions: the raw bytes decode to the fields asked for and recover to from", async function () {
      const raw = await signer.signTransaction(asked());
      const tx = Transaction.from(raw);
      expect({
        from: tx.from,
        to: tx.to,
        data: tx.data,
        nonce: tx.nonce,
        gasLimit: tx.gasLimit,
        chainId: tx.chainId,
        type: tx.type,
        maxFeePerGas: tx.maxFeePerGas,
      }).to.deep.equal({
        from: server.addresses[0],
        to: getAddress(to),
        data: "0x12345678aabb",
        nonce: 7,
        gasLimit: 210_000n,
        chainId: 31337n,
        type: 2,
        maxFeePerGas: 2_000_000_000n,
      });
      // What went over the wire: the Web3Signer eth1 shape, hex quantities.
      expect(server.calls.at(-1)!.params[0]).to.deep.equal({
        from: server.addresses[0],
        to: getAddress(to),
        gas: "0x33450",
        nonce: "0x7",
        value: "0x0",
        data: "0x12345678aabb",
        chainId: "0x7a69",
        maxFeePerGas: "0x77359400",
        maxPriorityFeePerGas: "0xf4240",
      });
      const legacy = Transaction.from(
        await signer.signTransaction(asked({ type: 0, gasPrice: 0n } as Partial<SignableTransaction>)),
      );
      expect([legacy.type, legacy.gasPrice, legacy.chainId, legacy.from]).to.deep.equal([
        0,
        0n,
        31337n,
        server.addresses[0],
      ]);
      expect(server.calls.at(-1)!.params[0]).to.include({ gasPrice: "0x0" }).and.not.have.property("maxFeePerGas");
    });

    it("signs a contract creation (no to), and refuses one the signer turned into a call", async function () {
      const creation = asked({ to: null, data: "0x6080604052" });
      const tx = Transaction.from(await signer.signTransaction(creation));
      expect([tx.to, tx.data, tx.from]).to.deep.equal([null, "0x6080604052", server.addresses[0]]);
      expect(server.calls.at(-1)!.params[0]).to.not.have.property("to");
      server.misbehave = "addressed";
      const error = await refusal(signer.signTransaction(creation));
      expect([error.status, error.code]).to.deep.equal([502, "SIGNER_INVALID_RESPONSE"]);
      expect(error.details).to.deep.equal({ differing: ["to"] });
    });

    it("refuses a transaction signed by another key than from", async function () {
      server.misbehave = "otherKey";
      const error = await refusal(signer.signTransaction(asked()));
      expect([error.status, error.code]).to.deep.equal([502, "SIGNER_INVALID_RESPONSE"]);
      expect(error.details).to.deep.equal({ differing: ["from"] });
    });

    it("refuses a transaction for another chain id", async function () {
      server.misbehave = "otherChainId";
      const error = await refusal(signer.signTransaction(asked()));
      expect(error.code).to.equal("SIGNER_INVALID_RESPONSE");
      expect(error.details).to.deep.equal({ differing: ["chainId"] });
      expect(error.message).to.match(/differs from the one asked for \(chainId\); it was not recorded or sent/);
    });

    it("refuses a transaction whose calldata was changed", async function () {
      server.misbehave = "tamperedData";
      const error = await refusal(signer.signTransaction(asked()));
      expect(error.details).to.deep.equal({ differing: ["data"] });
    });

    it("maps a JSON-RPC error to SIGNER_REFUSED with the signer's code and message", async function () {
      const stranger = Wallet.createRandom().address;
      const error = await refusal(signer.signTransaction(asked({ from: stranger })));
      expect([error.status, error.code]).to.deep.equal([502, "SIGNER_REFUSED"]);
      expect(error.message).to.equal(
        `The remote signer refused eth_signTransaction: unknown account ${getAddress(stranger)} (JSON-RPC error -32000)`,
      );
      expect(error.details).to.include({ method: "eth_signTransaction", signerCode: -32000 });
    });

    it("answers SIGNER_REFUSED when the signer refuses our credentials, SIGNER_UNAVAILABLE when it cannot be reached or is too slow", async function () {
      const wrong = await refusal(new RemoteSigner({ url: server.url, authorization: "Bearer wrong" }).addresses());
      expect([wrong.status, wrong.code]).to.deep.equal([502, "SIGNER_REFUSED"]);
      expect(wrong.message).to.match(/refused our credentials \(HTTP 401\); check REMOTE_SIGNER_AUTH/);
      expect(wrong.message).to.not.include("wrong"); // the header value is never echoed
      // Credentials in the URL are sent as Basic auth (fetch refuses URLs that carry them).
      const inUrl = new URL(server.url);
      [inUrl.username, inUrl.password] = ["ops", "s3cret"];
      await refusal(new RemoteSigner({ url: inUrl.toString() }).addresses());
      expect(server.calls.at(-1)!.authorization).to.equal(`Basic ${Buffer.from("ops:s3cret").toString("base64")}`);

      const closed = net.createServer().listen(0, "127.0.0.1");
      await new Promise((r) => closed.once("listening", r));
      const port = (closed.address() as net.AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const down = await refusal(
        new RemoteSigner({ url: `http://127.0.0.1:${port}`, authorization: AUTH }).signTransaction(asked()),
      );
      expect([down.status, down.code, down.headers?.["Retry-After"]]).to.deep.equal([503, "SIGNER_UNAVAILABLE", "5"]);

      server.misbehave = "slow";
      const started = Date.now();
      const slow = await refusal(
        new RemoteSigner({ url: server.url, authorization: AUTH, timeoutMs: 300 }).signTransaction(asked()),
      );
      expect(Date.now() - started).to.be.below(1_500);
      expect([slow.status, slow.code, slow.message]).to.deep.equal([
        503,
        "SIGNER_UNAVAILABLE",
        "The remote signer did not answer eth_signTransaction within 300 ms; nothing was recorded",
      ]);
    });
  });

  describe("an API process with SIGNER=remote", function () {
    const tag = letters(`${Date.now() % 1e7}`);
    const code = `REMOTE_${tag}`;
    let server: RemoteSignerServer;
    let remoteApi: ApiHandle | undefined;
    let driver: Driver;
    let adminToken: string;
    let department: { code: string; apiKey: string; apiSecret: string } | undefined;

    /**
     * The deployer (DEFAULT_ADMIN_ROLE) grants a signer-held key every role a wallet of the stack holds (`from`: its
     * operator or its administration wallet), found from the contracts' RoleGranted events.
     */
    /** The receipt of a transaction sent to anvil, asked for directly (and mined by hand if the chain held it back). */
    async function minedReceipt(hash: string): Promise<{ status: string } | null> {
      const provider = driver.core.provider;
      for (let attempt = 0; attempt < 100; attempt++) {
        const receipt = await provider.send("eth_getTransactionReceipt", [hash]);
        if (receipt) return receipt;
        if (attempt === 20) await provider.send("evm_mine", []);
        await new Promise((r) => setTimeout(r, 100));
      }
      return null;
    }

    async function grantRolesOf(from: string, operator: string) {
      const stack = current();
      const provider = driver.core.provider;
      const deployer = (stack.deployment as unknown as { deployer: string }).deployer;
      const access = new Interface(LicenceTokenAbi as never); // every contract has OpenZeppelin's AccessControl
      await provider.send("anvil_impersonateAccount", [deployer]);
      try {
        for (const address of Object.values(stack.deployment.contracts)) {
          const granted = await provider.getLogs({
            address,
            fromBlock: 0,
            topics: [access.getEvent("RoleGranted")!.topicHash, null, zeroPadValue(from, 32)],
          });
          for (const role of new Set(granted.map((log) => log.topics[1]))) {
            const [held] = access.decodeFunctionResult(
              "hasRole",
              await provider.call({ to: address, data: access.encodeFunctionData("hasRole", [role, from]) }),
            );
            if (!held) continue;
            const hash = await provider.send("eth_sendTransaction", [
              { from: deployer, to: address, data: access.encodeFunctionData("grantRole", [role, operator]) },
            ]);
            expect((await minedReceipt(hash))?.status, `grant ${role} on ${address}`).to.equal("0x1");
          }
        }
      } finally {
        await provider.send("anvil_stopImpersonatingAccount", [deployer]);
      }
    }

    before(async function () {
      const stack = current();
      driver = await createDriver(stack);
      // Key 0: the operator; 3: the administration wallet; 1 and 2: department keys provisioned in the signer.
      server = await startRemoteSignerServer({ count: 4, authorization: AUTH });
      await grantRolesOf(stack.operatorAddress, server.addresses[0]);
      await grantRolesOf(stack.adminAddress, server.addresses[3]);
      remoteApi = await stack.startExtraApi(undefined, {
        SIGNER: "remote",
        REMOTE_SIGNER_URL: server.url,
        REMOTE_SIGNER_AUTH: AUTH,
        OPERATOR_ADDRESS: server.addresses[0],
        ADMIN_WALLET_ADDRESS: server.addresses[3],
        JOBS_IN_API: "false",
      });
      ({ adminToken } = await adminSession(stack));
    });
    after(async () => {
      await remoteApi?.stop();
      await server?.stop();
      await driver?.close();
    });

    it("records the operator as a remote wallet at start-up (no key in the database) and keeps REMOTE_SIGNER_AUTH out of its logs", async function () {
      const { rows } = await driver.core.pool.query(
        `SELECT purpose, signer, encrypted_key FROM wallets WHERE address = $1`,
        [server.addresses[0].toLowerCase()],
      );
      expect(rows).to.deep.equal([{ purpose: "OPERATOR", signer: "remote", encrypted_key: null }]);
      expect(server.calls.some((c) => c.method === "eth_accounts" && c.authorization === AUTH)).to.equal(true);
      expect(remoteApi!.process.tail()).to.not.include(AUTH.slice(7));
    });

    it("registers departments with keys of the signer: walletAddress checked against eth_accounts, else the next unused key", async function () {
      const remote = http(remoteApi!.url, adminToken);
      const stranger = Wallet.createRandom().address;
      const notInSigner = await remote.post("/departments", {
        code: `${code}_X`,
        name: "Not a signer key",
        walletAddress: stranger,
      });
      expect(notInSigner.status).to.equal(400);
      expect(notInSigner.body).to.deep.include({ code: "VALIDATION_ERROR", details: { field: "walletAddress" } });
      const taken = await remote.post("/departments", {
        code: `${code}_X`,
        name: "The operator's key",
        walletAddress: server.addresses[0],
      });
      expect([taken.status, taken.body.code]).to.deep.equal([409, "WALLET_IN_USE"]);
      // The embedded key vault makes its own keys: a chosen address is refused there.
      const local = await http(current().api.url, adminToken).post("/departments", {
        code: `${code}_X`,
        name: "Vault",
        walletAddress: server.addresses[2],
      });
      expect([local.status, local.body.code]).to.deep.equal([400, "VALIDATION_ERROR"]);
      expect(
        (await driver.core.pool.query(`SELECT 1 FROM departments WHERE code = $1`, [`${code}_X`])).rowCount,
      ).to.equal(0);

      const chosen = await remote.post("/departments", {
        code: `${code}_B`,
        name: "Chosen key",
        walletAddress: server.addresses[2].toLowerCase(),
      });
      expect(chosen.status, JSON.stringify(chosen.body)).to.equal(201);
      expect(chosen.body.walletAddress).to.equal(server.addresses[2]);
      const next = await remote.post("/departments", { code, name: "Next unused key" });
      expect(next.status, JSON.stringify(next.body)).to.equal(201);
      expect(next.body.walletAddress).to.equal(server.addresses[1]);
      department = { code, apiKey: next.body.apiKey, apiSecret: next.body.apiSecret };
      const none = await remote.post("/departments", { code: `${code}_C`, name: "No key left" });
      expect([none.status, none.body.code]).to.deep.equal([409, "NO_SIGNER_KEY_AVAILABLE"]);

      // Registered on chain by governance (on the development chain the deployer, whose key the stack gives the
      // API); the signer-held key proved it holds its key by signing the DepartmentKey typed data.
      const registration = await driver.core.provider.getTransaction(next.body.transactionHash);
      expect(registration!.from).to.equal((current().deployment as unknown as { deployer: string }).deployer);
      const proofs = server.calls.filter((c) => c.method === "eth_signTypedData_v4");
      expect(proofs.map((c) => getAddress(String(c.params[0])))).to.include(server.addresses[1]);
    });

    it("runs a request end to end: created, documented, submitted and approved, each transaction signed by the signer", async function () {
      const stack = current();
      // This file's department is the one stage of the BUILDING_PERMIT workflow (registered by the stack's operator).
      const credentials = await driver.core.pool.query(`SELECT wallet_address FROM departments WHERE code = $1`, [
        code,
      ]);
      expect(credentials.rows[0].wallet_address).to.equal(server.addresses[1].toLowerCase());
      await seedWorkflow(
        stack,
        driver,
        workflow(
          "BUILDING_PERMIT",
          "Building permit (remote signer test)",
          stage("remote", "Remote", "SEQUENTIAL", { [code]: ["SITE_PLAN"] }),
        ),
      );
      expect(department, "the department registered by the previous test").to.not.equal(undefined);
      const asDepartment = departmentClient(remoteApi!.url, department!);

      const applicantId = `remote-${tag}`;
      const token = await applicantToken(stack.api.url, { id: applicantId, name: "Remy Remote" });
      const { id: requestId, docs } = await submittedRequest(
        { ...http(remoteApi!.url, token), id: applicantId },
        "BUILDING_PERMIT",
        {
          SITE_PLAN: pdf(`remote plan ${tag}`),
        },
      );

      // One signer per process: the stack's own API (key vault) has no key for this department and records nothing.
      const outboxOf = async (wallet: string) =>
        (
          await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions WHERE from_address = $1`, [
            wallet.toLowerCase(),
          ])
        ).rows[0].n as number;
      const viaVault = await departmentClient(stack.api.url, department!).post(`/requests/${requestId}/approve`, {
        remarks: "Vault",
        reviewedDocuments: [docs.SITE_PLAN],
      });
      expect([viaVault.status, viaVault.body.code]).to.deep.equal([502, "SIGNER_REFUSED"]);
      expect(await outboxOf(server.addresses[1])).to.equal(0);

      const approved = await asDepartment.post(`/requests/${requestId}/approve`, {
        remarks: "Signed remotely",
        reviewedDocuments: [docs.SITE_PLAN],
      });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect(approved.body.status).to.equal("APPROVED");

      // The decision on chain: DecisionRecorded, sent from the signer-held department key, signed by the signer.
      const provider = driver.core.provider;
      const decision = await provider.getTransaction(approved.body.transactionHash);
      expect(decision!.from).to.equal(server.addresses[1]);
      const receipt = await provider.getTransactionReceipt(approved.body.transactionHash);
      const events = receipt!.logs
        .map((log) => approvalRegistry.parseLog(log))
        .filter((e) => e?.name === "DecisionRecorded");
      expect(events).to.have.length(1);
      expect(server.signed.map((raw) => Transaction.from(raw).hash)).to.include(approved.body.transactionHash);

      // Every transaction of the request was sent by a signer-held key (the operator, then the department).
      const { rows: sent } = await driver.core.pool.query(
        `SELECT kind, from_address, tx_hash FROM chain_transactions WHERE request_id = $1 ORDER BY created_at`,
        [requestId],
      );
      expect(sent.map((r) => r.kind)).to.include.members(["MINT_NFT", "DOC_UPDATE", "SUBMIT", "APPROVAL"]);
      for (const row of sent) {
        expect(row.from_address).to.equal(
          (row.kind === "APPROVAL" ? server.addresses[1] : server.addresses[0]).toLowerCase(),
        );
        expect(
          server.signed.map((raw) => Transaction.from(raw).hash),
          row.kind,
        ).to.include(row.tx_hash);
      }
      // The API process's database holds no key for the signer's wallets.
      const { rows: wallets } = await driver.core.pool.query(
        `SELECT address, signer, encrypted_key FROM wallets WHERE address = ANY($1)`,
        [server.addresses.map((a) => a.toLowerCase())],
      );
      expect(wallets).to.have.length(4);
      expect(wallets.every((w) => w.signer === "remote" && w.encrypted_key === null)).to.equal(true);
    });

    it("answers 502 and records nothing when the signer returns another transaction; the nonce is not used", async function () {
      const stack = current();
      const operator = server.addresses[0].toLowerCase();
      const state = async () => ({
        nonce: (await driver.core.pool.query(`SELECT next_nonce FROM wallets WHERE address = $1`, [operator])).rows[0]
          .next_nonce as string,
        outbox: (
          await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions WHERE from_address = $1`, [
            operator,
          ])
        ).rows[0].n as number,
      });
      const applicantId = `remote-refused-${tag}`;
      const applicant = http(
        remoteApi!.url,
        await applicantToken(stack.api.url, { id: applicantId, name: "Tess Tampered" }),
      );
      const before = await state();
      server.misbehave = "tamperedData";
      try {
        const refused = await applicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
        expect(refused.status).to.equal(502);
        expect(refused.body).to.deep.include({ code: "SIGNER_INVALID_RESPONSE", details: { differing: ["data"] } });
      } finally {
        server.misbehave = "none";
      }
      expect(await state()).to.deep.equal(before);
      // The same write once the signer behaves: the nonce that was not used is the one taken.
      const created = await applicant.post("/requests", { applicantId, requestType: "BUILDING_PERMIT" });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const mint = (
        await driver.core.pool.query(
          `SELECT nonce FROM chain_transactions WHERE request_id = $1 AND kind = 'MINT_NFT'`,
          [created.body.requestId],
        )
      ).rows[0];
      expect(mint.nonce).to.equal(before.nonce);
    });
  });

  describe("the embedded stack (npm start) with SIGNER=remote", function () {
    it("deploys with the signer's operator key holding the roles and keeps no key in its database", async function () {
      const server = await startRemoteSignerServer({ count: 3, authorization: AUTH });
      const dataDir = await mkdtemp(path.join(os.tmpdir(), "licence-remote-"));
      let stack: Stack | undefined;
      let pool: ReturnType<typeof createPool> | undefined;
      try {
        stack = await startStack({
          log: () => {},
          env: {
            NODE_ENV: "test",
            DATA_DIR: dataDir,
            DATABASE_URL: "",
            CHAIN_RPC_URL: "",
            LOG_LEVEL: "info",
            PORT: String(await freePort()),
            CHAIN_PORT: String(await freePort()),
            EMBEDDED_PG_PORT: String(await freePort()),
            INDEXER_PORT: String(await freePort()),
            RATE_LIMIT_AUTH_PER_MINUTE: "0",
            RATE_LIMIT_WRITE_PER_MINUTE: "0",
            RATE_LIMIT_READ_PER_MINUTE: "0",
            SIGNER: "remote",
            REMOTE_SIGNER_URL: server.url,
            REMOTE_SIGNER_AUTH: AUTH,
            OPERATOR_ADDRESS: server.addresses[0],
            ADMIN_WALLET_ADDRESS: server.addresses[2],
          },
        });
        expect(stack.operatorAddress).to.equal(server.addresses[0]);
        const { admin } = await adminSession(stack);
        const created = await admin.post("/departments", { code: "REMOTE_STACK", name: "Remote stack" });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        expect(created.body.walletAddress).to.equal(server.addresses[1]);
        const registration = await rpc<{ from: string }>(stack.rpcUrl, "eth_getTransactionByHash", [
          created.body.transactionHash,
        ]);
        const deployer = (stack.deployment as unknown as { deployer: string }).deployer;
        expect(getAddress(registration.from), "registered by governance").to.equal(deployer);
        pool = createPool(stack.databaseUrl, stack.config.apiSchema, 1);
        const { rows } = await pool.query(
          `SELECT address, signer, encrypted_key IS NOT NULL AS has_key FROM wallets WHERE purpose <> 'GOVERNANCE' ORDER BY created_at`,
        );
        expect(rows).to.have.deep.members(
          server.addresses.map((a) => ({ address: a.toLowerCase(), signer: "remote", has_key: false })),
        );
        // The one key sealed here is the development chain's governance: anvil's public deployer key, given by the
        // stack on chain 31337 only.
        const governance = await pool.query(`SELECT address FROM wallets WHERE purpose = 'GOVERNANCE'`);
        expect(governance.rows.map((r) => getAddress(r.address))).to.deep.equal([deployer]);
      } finally {
        await pool?.end();
        await stack?.stop();
        await server.stop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });
});
