/**
 * A separate process sending writes through its own chain gateway on the shared Postgres and chain, as a second
 * API process would: `node gatewayWriter.ts <count> <prefix>` with the stack's environment. Prints one JSON line.
 */
import { Interface, Wallet, encodeBytes32String } from "ethers";
import { ApprovalRegistryAbi, DEPARTMENT_KEY_TYPES } from "../../../abis/index.ts";
import { governanceWallet } from "../../../api/src/chain/governanceKey.ts";
import { loadConfig } from "../../../api/src/config.ts";
import { loadDeployment } from "../../../api/src/chain/deployment.ts";
import { createLogger } from "../../../api/src/observability/logger.ts";
import { createCoreServices } from "../../../api/src/services.ts";

const [count, prefix] = [Number(process.argv[2]), process.argv[3]];
const config = loadConfig();
const core = await createCoreServices(config, createLogger("silent"));
const deployment = await loadDeployment(config);
// Registrations are governance's: the key the stack gives its APIs.
const admin = await governanceWallet(core.wallets, config.governancePrivateKey!);
const registry = new Interface(ApprovalRegistryAbi as never);
const [, name, version, chainId, verifyingContract, salt] = registry.decodeFunctionResult(
  "eip712Domain",
  await core.provider.call({
    to: deployment.contracts.ApprovalRegistry,
    data: registry.encodeFunctionData("eip712Domain", []),
  }),
);
const domain = { name, version, chainId, verifyingContract, salt };
/** A fresh wallet registered under `code`, with its proof that it holds its key. */
async function registration(code: string): Promise<string> {
  const wallet = Wallet.createRandom();
  const message = { code: encodeBytes32String(code), wallet: wallet.address, custody: 0 };
  const proof = await wallet.signTypedData(domain, DEPARTMENT_KEY_TYPES, message);
  return registry.encodeFunctionData("registerDepartment", [message.code, wallet.address, 0, proof]);
}

const results = await Promise.allSettled(
  Array.from({ length: count }, async (_, i) =>
    core.gateway.send({
      kind: "REGISTER_DEPARTMENT",
      from: admin,
      to: deployment.contracts.ApprovalRegistry,
      data: await registration(`${prefix}_${i}`),
    }),
  ),
);
console.log(
  JSON.stringify(
    results.map((r) =>
      r.status === "fulfilled"
        ? { hash: r.value.hash, nonce: r.value.nonce.toString() }
        : { error: String(r.reason?.message ?? r.reason) },
    ),
  ),
);
await core.close();
