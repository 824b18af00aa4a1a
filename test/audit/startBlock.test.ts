/**
 * Where the audit starts reading events, derived from the chain rather than taken from the deployment file: on a
 * real local chain (anvil, the platform deployed by scripts/deploy.ts) the auditor finds each contract's creation
 * block by eth_getCode at past blocks and reads from the first; a file whose startBlock is later is a finding, and
 * the events it would hide are still read. Restarted from its snapshot, anvil keeps no state for old blocks: the
 * auditor then reads from block 0, says so, and flags a late startBlock by the contracts' first event.
 * Needs the contracts compiled (`npx hardhat build`).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { JsonRpcProvider, Wallet } from "ethers";
import { startLocalChain, type LocalChain } from "../../scripts/stack/localChain.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { runAudit } from "./auditCli.ts";
import { localPlatform, type LocalPlatform } from "./localPlatform.ts";

describe("auditor: the start block, derived from the chain (anvil, deploy.ts)", function () {
  this.timeout(180_000);
  let p: LocalPlatform;
  let tokenCreated: number;

  before(async function () {
    p = await localPlatform(31337, {
      OPERATOR_ADDRESS: Wallet.createRandom().address,
      ADMIN_ADDRESS: Wallet.createRandom().address,
      WALLET_DELAY_SECONDS: "60",
    });
  });

  after(async function () {
    await p?.close();
  });

  it("finds each contract's creation block and reads events from the first (exit 0)", async function () {
    const { code, report, stderr } = await p.audit("--all");
    expect(code, stderr + JSON.stringify(report?.findings)).to.equal(0);
    const { creationBlocks } = report.startBlock;
    expect(Object.keys(creationBlocks)).to.have.members([
      "LicenceToken",
      "DocumentRegistry",
      "ApprovalRegistry",
      "DecisionVerifier",
    ]);
    for (const [name, block] of Object.entries(creationBlocks) as [string, number][]) {
      const address = p.deployment.contracts[name as keyof typeof p.deployment.contracts];
      expect(await p.provider.getCode(address, block - 1), `${name} before block ${block}`).to.equal("0x");
      expect(await p.provider.getCode(address, block), `${name} at block ${block}`).to.not.equal("0x");
    }
    tokenCreated = creationBlocks.LicenceToken;
    // The verifier emits no events: the first contract that does is the token.
    expect(report.startBlock).to.deep.include({ derived: true, readFrom: tokenCreated, deploymentFile: tokenCreated });
    const constructorGrant = report.roles.grants.find(
      (g: any) => g.contract === "LicenceToken" && g.role === "DEFAULT_ADMIN_ROLE",
    );
    expect(constructorGrant.granted.blockNumber).to.equal(tokenCreated);
  });

  it("flags a deployment file whose startBlock is after the first creation, and still reads the events before it (exit 1)", async function () {
    const late = tokenCreated + 2;
    const { code, report } = await p.auditWith({ ...p.deployment, startBlock: late }, "--all");
    expect(code).to.equal(1);
    expect(report.findings).to.deep.equal([
      `the deployment file's startBlock ${late} is after block ${tokenCreated}, where LicenceToken was created: whoever reads events from the file's start misses those of blocks ${tokenCreated} to ${late - 1}`,
    ]);
    // The constructor's grants are before the file's start, and the audit has them all.
    expect(report.roles.grants.filter((g: any) => g.granted.blockNumber < late)).to.have.length.above(0);
    expect(report.roles.grants.every((g: any) => g.fromDeployment)).to.equal(true);
  });

  it("an earlier startBlock hides nothing: no finding, and the audit reads from there too", async function () {
    const { code, report } = await p.auditWith({ ...p.deployment, startBlock: 0 }, "--all");
    expect(code, JSON.stringify(report.findings)).to.equal(0);
    expect(report.startBlock).to.deep.include({ deploymentFile: 0, derived: true, readFrom: 0 });
    expect(report.startBlock.creationBlocks.LicenceToken).to.equal(tokenCreated);
  });

  describe("a node without state for old blocks (anvil restarted from its snapshot)", function () {
    let restarted: LocalChain;

    before(async function () {
      expect(await p.chain.stop(), "the snapshot is saved").to.equal(true);
      restarted = await startLocalChain({ dataDir: p.dir, port: await freePort(), chainId: 31337 });
      const provider = new JsonRpcProvider(restarted.rpcUrl, undefined, { staticNetwork: true });
      const refused = await provider.getCode(p.deployment.contracts.LicenceToken, 1).then(
        () => undefined,
        (error: Error) => error,
      );
      provider.destroy();
      expect(refused, "eth_getCode at an old block fails").to.not.equal(undefined);
    });

    after(async function () {
      await restarted?.kill();
    });

    it("reads events from block 0 and says why (exit 0)", async function () {
      const { code, report } = await runAudit(restarted.rpcUrl, p.deploymentFile, "--build", p.buildFile, "--all");
      expect(code, JSON.stringify(report.findings)).to.equal(0);
      expect(report.startBlock).to.deep.include({ derived: false, readFrom: 0 });
      expect(
        report.notes.some((n: string) =>
          /^the node keeps no state for old blocks \(eth_getCode at block \d+ failed: .+\): the contracts' creation blocks could not be derived, so events were read from block 0$/.test(
            n,
          ),
        ),
        JSON.stringify(report.notes),
      ).to.equal(true);
    });

    it("flags a startBlock after the contracts' first event (exit 1)", async function () {
      const late = tokenCreated + 2;
      const file = path.join(p.dir, "late.json");
      await writeFile(file, JSON.stringify({ ...p.deployment, startBlock: late }));
      const { code, report } = await runAudit(restarted.rpcUrl, file, "--build", p.buildFile, "--all");
      expect(code).to.equal(1);
      expect(report.findings).to.deep.equal([
        `the deployment file's startBlock ${late} is after block ${tokenCreated}, where the contracts emitted RoleGranted: whoever reads events from the file's start misses those before it`,
      ]);
    });
  });
});
