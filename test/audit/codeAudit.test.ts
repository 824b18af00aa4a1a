/**
 * The code at each deployed address against the reviewed build: first the comparison itself on made-up code
 * (what is masked and what is not), then on a real local chain (anvil, the platform deployed by scripts/deploy.ts):
 * the honest deployment matches; ApprovalRegistry compiled with one line changed (with solc-js, from the sources
 * the artifacts were built from) and put at the registry's address does not; nor does a change of the metadata
 * tail alone, nor another contract's code; and an immutable that is not the deployment's address is found even
 * though the code around it matches. Needs the contracts compiled (`npx hardhat build`).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { Wallet, getBytes, hexlify } from "ethers";
import { firstDifference, immutableValues } from "../../scripts/audit/codeAudit.ts";
import { compileReviewedBuild } from "../../scripts/audit/reproduceBuild.ts";
import type { ReviewedContract } from "../../scripts/audit/reviewedBuild.ts";
import { REPO_ROOT } from "./auditCli.ts";
import { localPlatform, type LocalPlatform } from "./localPlatform.ts";

describe("auditor: runtime code against the reviewed build (made-up code)", function () {
  // 2 bytes of code, a library address (20 bytes), 1 byte, an immutable (32 bytes), 1 byte.
  const library = `__$${"ab".repeat(17)}$__`;
  const reviewed: ReviewedContract = {
    sourceName: "project/contracts/C.sol",
    bytecode: "0x",
    deployedBytecode: `0x6001${library}60${"00".repeat(32)}f3`,
    immutableReferences: { "C.value": { typeString: "uint256", ranges: [{ start: 23, length: 32 }] } },
    linkReferences: {},
    deployedLinkReferences: { "project/contracts/L.sol": { L: [{ start: 2, length: 20 }] } },
    sources: {},
  };
  /** The deployed code (library 0x11…, immutable 42), with byte `at` set to `value`. */
  const deployed = (at = 0, value = 0x60) => {
    const bytes = getBytes(`0x6001${"11".repeat(20)}60${"00".repeat(31)}2af3`);
    bytes[at] = value;
    return bytes;
  };

  it("ignores the library's address and the immutable's value, and reads the immutable", function () {
    expect(firstDifference(deployed(), reviewed)).to.equal(null);
    expect(immutableValues(deployed(), reviewed)).to.deep.equal([
      { name: "C.value", typeString: "uint256", value: "42", consistent: true },
    ]);
  });

  it("names the first byte that differs outside them, or the shorter length", function () {
    expect(
      [deployed(1, 0x02), deployed(22, 0x61), deployed(55, 0xfe)].map((d) => firstDifference(d, reviewed)),
    ).to.deep.equal([1, 22, 55]);
    expect(firstDifference(deployed().slice(0, 40), reviewed)).to.equal(40);
  });
});

describe("auditor: runtime code against the reviewed build (anvil, deployed by deploy.ts)", function () {
  this.timeout(300_000);
  let p: LocalPlatform;
  let registry: string;
  let original: string;
  const keys = { admin: Wallet.createRandom().address, operator: Wallet.createRandom().address };
  const setCode = (code: Uint8Array | string) => p.provider.send("anvil_setCode", [registry, hexlify(code)]);

  before(async function () {
    p = await localPlatform(31337, {
      OPERATOR_ADDRESS: keys.operator,
      ADMIN_ADDRESS: keys.admin,
      WALLET_DELAY_SECONDS: "60",
    });
    registry = p.deployment.contracts.ApprovalRegistry;
    original = await p.provider.getCode(registry);
  });

  afterEach(async function () {
    if (p) await setCode(original);
  });

  after(async function () {
    await p?.close();
  });

  it("the honest deployment runs the reviewed build, its immutables the deployment's addresses (exit 0)", async function () {
    const { code, report, stderr } = await p.audit("--all");
    expect(code, stderr + JSON.stringify(report?.findings)).to.equal(0);
    const { contracts } = p.deployment;
    expect(report.code.map((c: any) => [c.contract, c.address])).to.include.deep.members(Object.entries(contracts));
    for (const c of report.code) {
      expect(c, c.contract).to.deep.include({ matchesReviewedBuild: true, firstDifference: null });
      expect(c.codeSize, c.contract).to.equal(c.reviewedSize);
    }
    const immutables = Object.fromEntries(
      report.code.find((c: any) => c.contract === "ApprovalRegistry").immutables.map((i: any) => [i.name, i.value]),
    );
    expect(immutables).to.include({
      "ApprovalRegistry.licenceToken": contracts.LicenceToken,
      "ApprovalRegistry.documentRegistry": contracts.DocumentRegistry,
      "ApprovalRegistry.decisionVerifier": contracts.DecisionVerifier,
    });
  });

  it("holds any other contract the deployment file names to the reviewed build too", async function () {
    const { contracts } = p.deployment;
    const { code, report } = await p.auditWith(
      {
        ...p.deployment,
        contracts: { ...contracts, Verifier2: contracts.DecisionVerifier, Unreviewed: contracts.LicenceToken },
      },
      "--all",
    );
    expect(code).to.equal(1);
    expect(report.findings).to.deep.equal([
      `Verifier2 at ${contracts.DecisionVerifier}: the reviewed build has no Verifier2, so its code cannot be checked`,
      `Unreviewed at ${contracts.LicenceToken}: the reviewed build has no Unreviewed, so its code cannot be checked`,
    ]);
  });

  it("flags ApprovalRegistry compiled with one line changed and put at the registry's address (exit 1)", async function () {
    // The sources the artifacts were compiled from, with one modifier changed: the operator may do what only the
    // administrator may. The immutables are written as the constructor would, with the deployment's values.
    const artifact = JSON.parse(
      await readFile(path.join(REPO_ROOT, "artifacts/contracts/ApprovalRegistry.sol/ApprovalRegistry.json"), "utf8"),
    );
    const info = JSON.parse(
      await readFile(path.join(REPO_ROOT, "artifacts/build-info", `${artifact.buildInfoId}.json`), "utf8"),
    );
    const sources = info.input.sources as Record<string, { content: string }>;
    const reviewed = p.build.contracts.ApprovalRegistry!;
    const line = "onlyRole(Roles.ADMIN_ROLE)";
    expect(sources[reviewed.sourceName]!.content).to.include(line);
    const read = (source: string) => {
      const content = sources[source]!.content;
      return source === reviewed.sourceName ? content.replace(line, "onlyRole(Roles.OPERATOR_ROLE)") : content;
    };
    const changed = compileReviewedBuild(
      { compiler: p.build.compiler, contracts: { ApprovalRegistry: reviewed } },
      read,
    ).contracts.ApprovalRegistry!;
    const onChain = getBytes(original);
    const forged = getBytes(changed.deployedBytecode);
    for (const [name, { ranges }] of Object.entries(changed.immutableReferences)) {
      const [from] = reviewed.immutableReferences[name]!.ranges;
      for (const { start, length } of ranges) forged.set(onChain.slice(from!.start, from!.start + length), start);
    }
    await setCode(forged);

    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    let first = 0;
    while (forged[first] === onChain[first]) first++;
    expect(report.findings).to.include(
      `ApprovalRegistry at ${registry} does not run the reviewed build of ApprovalRegistry: its runtime code differs from byte ${first} on (${forged.length} bytes on chain, ${onChain.length} reviewed)`,
    );
    expect(report.code.find((c: any) => c.contract === "ApprovalRegistry")).to.deep.include({
      matchesReviewedBuild: false,
      firstDifference: first,
    });

    expect(await p.auditText("--all")).to.include(
      `NOT the reviewed build (${onChain.length} bytes reviewed; differs from byte ${first})`,
    );
  });

  it("flags a change in the metadata tail alone: the tail carries the hash of the sources", async function () {
    const bytes = getBytes(original);
    // The CBOR metadata ends the code; its length is in the last two bytes.
    const tail = bytes.length - 2 - ((bytes[bytes.length - 2]! << 8) | bytes[bytes.length - 1]!);
    bytes[tail + 10] ^= 0xff;
    await setCode(bytes);
    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    expect(report.code.find((c: any) => c.contract === "ApprovalRegistry").firstDifference).to.equal(tail + 10);
  });

  it("flags another contract's code at the address, with both sizes", async function () {
    const other = await p.provider.getCode(p.deployment.contracts.DocumentRegistry);
    await setCode(other);
    const { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    const reviewedSize = getBytes(original).length;
    expect(
      report.findings.some((f: string) =>
        f.endsWith(`(${getBytes(other).length} bytes on chain, ${reviewedSize} reviewed)`),
      ),
      JSON.stringify(report.findings),
    ).to.equal(true);
  });

  it("flags an immutable that is not the deployment's address, and one written differently at its places", async function () {
    const { ranges } = p.build.contracts.ApprovalRegistry!.immutableReferences["ApprovalRegistry.licenceToken"]!;
    const impostor = Wallet.createRandom().address;
    const bytes = getBytes(original);
    for (const { start } of ranges) bytes.set(getBytes(impostor), start + 12);
    await setCode(bytes);
    let { code, report } = await p.audit("--all");
    expect(code).to.equal(1);
    expect(report.code.find((c: any) => c.contract === "ApprovalRegistry").matchesReviewedBuild).to.equal(true);
    expect(report.findings).to.include(
      `ApprovalRegistry at ${registry}: the immutable ApprovalRegistry.licenceToken is ${impostor}, not the deployment's LicenceToken ${p.deployment.contracts.LicenceToken}`,
    );

    const once = getBytes(original);
    once.set(getBytes(impostor), ranges.at(-1)!.start + 12);
    await setCode(once);
    ({ code, report } = await p.audit("--all"));
    expect(code).to.equal(1);
    expect(report.findings).to.include(
      `ApprovalRegistry at ${registry}: the immutable ApprovalRegistry.licenceToken holds different values at its places in the code`,
    );
  });
});
