import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";

/** EIP-170: the most runtime code a contract may have; Besu's default `contractSizeLimit` and anvil's limit. */
const EIP170_LIMIT = 24_576;
const ARTIFACTS = path.resolve(import.meta.dirname, "../../artifacts/contracts");
/** What ignition/modules/LicencePlatform.ts deploys: each must be among the artifacts checked. */
const DEPLOYED = ["LicenceToken", "DocumentRegistry", "DecisionVerifier", "RegistryExtension", "ApprovalRegistry"];

/** Runtime code size in bytes of every compiled contract with code (interfaces have none). */
async function runtimeSizes(): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const entry of await readdir(ARTIFACTS, { recursive: true })) {
    if (!entry.endsWith(".json") || entry.endsWith(".dbg.json")) continue;
    const artifact = JSON.parse(await readFile(path.join(ARTIFACTS, entry), "utf8"));
    if (typeof artifact.deployedBytecode !== "string") continue;
    // Immutables and library placeholders occupy their final width in the artifact: its length is the deployed size.
    const bytes = (artifact.deployedBytecode.length - 2) / 2;
    if (bytes > 0) sizes.set(artifact.contractName, bytes);
  }
  return sizes;
}

/**
 * Every contract must stay deployable where EIP-170 applies (Besu's default, anvil, mainnet-like chains): a contract
 * over the limit deploys nowhere but on a chain whose size limit was raised for it. Reads the compiled artifacts
 * (`npx hardhat build`), so the figure is the one deployment would use.
 */
describe("contract code size (EIP-170)", function () {
  it(`every compiled contract's runtime code is at most ${EIP170_LIMIT.toLocaleString("en")} bytes`, async function () {
    const sizes = await runtimeSizes();
    expect([...sizes.keys()], "the deployed contracts are compiled").to.include.members(DEPLOYED);
    const over = [...sizes].filter(([, bytes]) => bytes > EIP170_LIMIT).map(([name, bytes]) => `${name}: ${bytes}`);
    expect(over, `over the ${EIP170_LIMIT}-byte limit (move logic into a library or another contract)`).to.deep.equal(
      [],
    );
  });
});
