/**
 * A real Safe (Safe 1.4.1, the compiled artifacts of npm @safe-global/safe-contracts) on the test chain, as a
 * department's own wallet: the singleton, the proxy factory and the compatibility fallback handler (which answers
 * EIP-1271 `isValidSignature(bytes32,bytes)` for the Safe), and a proxy set up with the given owners and
 * threshold, as the Safe apps deploy one.
 *
 * For EIP-1271 a Safe checks its owners' signatures of a SafeMessage: EIP-712 typed data of the Safe's own domain
 * (chain id, the Safe's address) whose `message` is the hash asked about. `safeSignature` signs it with each owner
 * and concatenates the 65-byte signatures in ascending owner-address order, as the Safe requires.
 */
import { createRequire } from "node:module";
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  Contract,
  ContractFactory,
  Wallet,
  ZeroAddress,
  concat,
  type BaseWallet,
  type InterfaceAbi,
  type JsonRpcProvider,
} from "ethers";

const require = createRequire(import.meta.url);
const ARTIFACTS = path.join(
  path.dirname(require.resolve("@safe-global/safe-contracts/package.json")),
  "build",
  "artifacts",
  "contracts",
);

async function artifact(file: string): Promise<{ abi: InterfaceAbi; bytecode: string }> {
  return JSON.parse(await readFile(path.join(ARTIFACTS, file), "utf8"));
}

async function deploy(file: string, deployer: BaseWallet): Promise<Contract> {
  const { abi, bytecode } = await artifact(file);
  const contract = await new ContractFactory(abi, bytecode, deployer).deploy();
  await contract.waitForDeployment();
  return contract as Contract;
}

/** The Safe singleton's ABI (a proxy answers it). */
export async function safeAbi(): Promise<InterfaceAbi> {
  return (await artifact("Safe.sol/Safe.json")).abi;
}

/** Deploys a Safe owned by `owners` with `threshold` from a throw-away wallet the chain funds (anvil); its address. */
export async function deploySafe(provider: JsonRpcProvider, owners: string[], threshold: number): Promise<string> {
  const deployer = Wallet.createRandom().connect(provider);
  await provider.send("anvil_setBalance", [deployer.address, "0x3635c9adc5dea00000"]);
  const singleton = await deploy("Safe.sol/Safe.json", deployer);
  const factory = await deploy("proxies/SafeProxyFactory.sol/SafeProxyFactory.json", deployer);
  const handler = await deploy("handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json", deployer);
  const setup = singleton.interface.encodeFunctionData("setup", [
    owners,
    threshold,
    ZeroAddress, // no delegate call at setup
    "0x",
    await handler.getAddress(), // answers EIP-1271 for the Safe
    ZeroAddress, // no payment
    0,
    ZeroAddress,
  ]);
  const receipt = await (await factory.createProxyWithNonce(await singleton.getAddress(), setup, 0)).wait();
  const created = receipt.logs
    .map((log: { topics: string[]; data: string }) => factory.interface.parseLog(log))
    .find((parsed: { name: string } | null) => parsed?.name === "ProxyCreation");
  const safe = new Contract(created.args.proxy, singleton.interface, provider);
  if (Number(await safe.getThreshold()) !== threshold) throw new Error("the Safe was not set up");
  return safe.getAddress();
}

/** The owners' EIP-1271 signature of `hash` for the Safe at `safe` (SafeMessage, ascending owner order). */
export async function safeSignature(
  safe: string,
  chainId: number,
  hash: string,
  owners: BaseWallet[],
): Promise<string> {
  const domain = { chainId, verifyingContract: safe };
  const types = { SafeMessage: [{ name: "message", type: "bytes" }] };
  const ordered = [...owners].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
  return concat(await Promise.all(ordered.map((owner) => owner.signTypedData(domain, types, { message: hash }))));
}
