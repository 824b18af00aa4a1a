/**
 * A separate process sending writes through its own chain gateway on the shared Postgres and chain, as a second
 * API process would: `node gatewayWriter.ts <count> <prefix>` with the stack's environment. Prints one JSON line.
 */
import { Interface, Wallet, encodeBytes32String } from "ethers";
import { ApprovalRegistryAbi } from "../../../abis/index.ts";
import { loadConfig } from "../../../api/src/config.ts";
import { loadDeployment } from "../../../api/src/chain/deployment.ts";
import { createLogger } from "../../../api/src/observability/logger.ts";
import { createCoreServices } from "../../../api/src/services.ts";

const [count, prefix] = [Number(process.argv[2]), process.argv[3]];
const config = loadConfig();
const core = await createCoreServices(config, createLogger("silent"));
const deployment = await loadDeployment(config);
const admin = (await core.wallets.findByPurpose("ADMIN"))!;
const registry = new Interface(ApprovalRegistryAbi as never);

const results = await Promise.allSettled(
  Array.from({ length: count }, (_, i) =>
    core.gateway.send({
      kind: "REGISTER_DEPARTMENT",
      from: admin,
      to: deployment.contracts.ApprovalRegistry,
      data: registry.encodeFunctionData("registerDepartment", [
        encodeBytes32String(`${prefix}_${i}`),
        Wallet.createRandom().address,
        0,
      ]),
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
