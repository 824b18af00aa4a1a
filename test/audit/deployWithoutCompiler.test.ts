/**
 * Deploying needs no compiler: scripts/deploy.ts, run as the stack and an operator run it (`hardhat run
 * --no-compile`), deploys the reviewed build shipped in abis/build.json from a copy of the repository that has
 * never been compiled (no artifacts/, no cache/), as a fresh clone is before its first `npm start`. What it deploys
 * is the reviewed build byte for byte: the auditor, holding the code at every address to abis/build.json, finds
 * nothing.
 */
import { cp, readdir, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import type { LocalChain } from "../../scripts/stack/localChain.ts";
import { REPO_ROOT, runAudit } from "./auditCli.ts";
import { deploy, localChain } from "./localPlatform.ts";

/** What a deployment reads of the repository: the reviewed build and ABIs, the module, the scripts, the config. */
const CHECKOUT = ["abis", "contracts", "ignition", "scripts", "hardhat.config.ts", "package.json", "tsconfig.json"];

describe("deploying the platform compiles nothing: the reviewed build from a never-compiled checkout", function () {
  this.timeout(180_000);
  let dir: string;
  let chain: LocalChain;

  before(async function () {
    ({ chain, dir } = await localChain(31337));
    const checkout = path.join(dir, "repo");
    for (const entry of CHECKOUT)
      await cp(path.join(REPO_ROOT, entry), path.join(checkout, entry), {
        recursive: true,
        filter: (source) => !source.includes(`${path.sep}ignition${path.sep}deployments`),
      });
    await symlink(path.join(REPO_ROOT, "node_modules"), path.join(checkout, "node_modules"), "dir");
  });

  after(async function () {
    await chain?.kill();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("deploys with `hardhat run --no-compile` in seconds, writes no artifacts, and the code audits as the reviewed build", async function () {
    const checkout = path.join(dir, "repo");
    const deploymentFile = path.join(dir, "deployment.json");
    const began = performance.now();
    const [operator, admin] = [Wallet.createRandom().address, Wallet.createRandom().address];
    await deploy(
      chain.rpcUrl,
      dir,
      { OPERATOR_ADDRESS: operator, ADMIN_ADDRESS: admin, WALLET_DELAY_SECONDS: "60" },
      checkout,
    );
    const seconds = (performance.now() - began) / 1000;
    expect(seconds, "a deployment that compiles takes minutes").to.be.below(60);
    expect(await readdir(checkout)).to.not.include.members(["artifacts", "cache"]);

    const { code, report, stderr } = await runAudit(chain.rpcUrl, deploymentFile, "--all");
    expect(stderr).to.equal("");
    expect(report.findings).to.deep.equal([]);
    expect(code).to.equal(0);
    const audited = report.code.filter((c: { reachedBy: string }) => c.reachedBy === "deployment file");
    expect(audited.map((c: { contract: string }) => c.contract)).to.include.members([
      "LicenceToken",
      "DocumentRegistry",
      "ApprovalRegistry",
      "DecisionVerifier",
      "RegistryExtension",
    ]);
    for (const entry of audited) expect(entry.matchesReviewedBuild, entry.contract).to.equal(true);
  });
});
