/**
 * An API that holds no governance key (governance is a Safe on a real network): registering a department or a
 * workflow version sends and records nothing and answers 202 AWAITING_GOVERNANCE with the call for governance to
 * execute; executed by governance (here the development deployer, whose key anvil unlocks), it is on chain.
 */
import { expect } from "chai";
import { Wallet, toBeHex } from "ethers";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { clientToken } from "./support/authClient.ts";
import { eoaKeySigner, keyProof } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http } from "./support/httpClient.ts";
import { b32, createDriver, registry, type Driver } from "./support/platformDriver.ts";
import { letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("an API without a governance key (governance is a Safe): 202 AWAITING_GOVERNANCE", function () {
  const tag = letters(`${Date.now() % 1e7}`);
  let api: ApiHandle | undefined;
  let driver: Driver;
  let admin: ReturnType<typeof http>;
  let adminToken: string;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    api = await stack.startExtraApi(undefined, { GOVERNANCE_PRIVATE_KEY: "", JOBS_IN_API: "false" });
    adminToken = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
    admin = http(api.url, adminToken);
  });
  after(async () => {
    await api?.stop();
    await driver?.close();
  });

  const recordedTransactions = async () =>
    (await driver.core.pool.query(`SELECT count(*)::int AS n FROM chain_transactions`)).rows[0].n as number;

  it("hands a department's registration to governance, records nothing, and governance's execution registers it", async function () {
    const code = `SAFE_GOVERNED_${tag}`;
    const key = Wallet.createRandom();
    const change = { code, custody: "DEPARTMENT_HELD" as const, walletAddress: key.address };
    const proof = await keyProof(api!.url, adminToken, change, eoaKeySigner(key));
    const before = await recordedTransactions();
    const answer = await admin.post("/departments", { ...change, name: "Registered by governance", keyProof: proof });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    expect(answer.body.status).to.equal("AWAITING_GOVERNANCE");
    expect(answer.body.transaction).to.include({
      to: current().deployment.contracts.ApprovalRegistry,
      value: "0",
      chainId: current().config.chainId,
    });
    expect(await recordedTransactions(), "nothing sent").to.equal(before);
    const rows = await driver.core.pool.query(`SELECT 1 FROM departments WHERE code = $1`, [code]);
    expect(rows.rowCount, "no department row").to.equal(0);

    // Governance (the development deployer) executes the call as given: the department is on chain.
    const deployer = (current().deployment as unknown as { deployer: string }).deployer;
    // At the next mined nonce: a transaction of the API's still waiting in the pool must not hold this one back.
    const nonce = toBeHex(await driver.core.provider.getTransactionCount(deployer, "latest"));
    const hash = await driver.core.provider.send("eth_sendTransaction", [
      { from: deployer, to: answer.body.transaction.to, data: answer.body.transaction.data, nonce },
    ]);
    // Its receipt asked for directly, as the gateway does, not through ethers' "block" subscription (waitForTransaction
    // once timed out here in a full run).
    const mined = await eventually(
      "governance's transaction mined",
      async () => (await driver.core.provider.getTransactionReceipt(hash)) ?? undefined,
      60_000,
    );
    expect(mined.status).to.equal(1);
    await driver.core.wallets.catchUpNonce(deployer);
    const [, wallet] = registry.decodeFunctionResult(
      "departmentByCode",
      await driver.core.provider.call({
        to: driver.addresses.ApprovalRegistry,
        data: registry.encodeFunctionData("departmentByCode", [b32(code)]),
      }),
    );
    expect(wallet).to.equal(key.address);
  });

  it("hands a workflow version to governance and records no definition", async function () {
    const workflowType = "TRADE_LICENSE";
    // A department registered through the stack's own API (which holds the development governance key).
    const departmentCode = `GOVERNED_STAGE_${tag}`;
    const registered = await http(current().api.url, adminToken).post("/departments", {
      code: departmentCode,
      name: "Department of the workflow awaiting governance",
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
    const before = await recordedTransactions();
    const answer = await admin.post(
      "/workflows",
      workflow(
        workflowType,
        "Trade licence (awaiting governance)",
        stage("one", "One", "PARALLEL", { [departmentCode]: ["SITE_PLAN"] }),
      ),
    );
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    expect(answer.body.status).to.equal("AWAITING_GOVERNANCE");
    expect(answer.body.transaction.to).to.equal(current().deployment.contracts.ApprovalRegistry);
    expect(await recordedTransactions(), "nothing sent").to.equal(before);
    const stored = await driver.core.pool.query(`SELECT 1 FROM workflows WHERE workflow_type = $1`, [workflowType]);
    expect(stored.rowCount, "no workflow definition recorded").to.equal(0);
  });
});
