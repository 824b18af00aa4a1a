/**
 * Drives the contracts through the real write path (the chain gateway: simulate, record in the outbox, broadcast,
 * receipt, wait for the index) as the operator and as departments' custodial wallets. Stack tests use it until
 * the HTTP endpoints of later issues exist, and alongside them afterwards.
 */
import { Interface, Wallet, encodeBytes32String, id, sha256, toUtf8Bytes, zeroPadValue, toBeHex } from "ethers";
import pg from "pg";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../../abis/index.ts";
import { loadConfig } from "../../../api/src/config.ts";
import type { ConfirmedTx, TxKind } from "../../../api/src/chain/chainGateway.ts";
import { createLogger } from "../../../api/src/observability/logger.ts";
import { createCoreServices, type CoreServices } from "../../../api/src/services.ts";
import type { Stack } from "../../../scripts/stack/stack.ts";

export const token = new Interface(LicenceTokenAbi as never);
export const documents = new Interface(DocumentRegistryAbi as never);
export const registry = new Interface(ApprovalRegistryAbi as never);
export const b32 = encodeBytes32String;
export const sha = (text: string) => sha256(toUtf8Bytes(text));
export const uuidBytes = (n: number) => zeroPadValue(toBeHex(n), 16);

export interface Driver {
  core: CoreServices;
  operator: string;
  /** The administration wallet (ADMIN_ROLE): registers departments and workflows. */
  admin: string;
  addresses: Stack["deployment"]["contracts"];
  send(
    kind: TxKind,
    from: string,
    contract: keyof Stack["deployment"]["contracts"],
    data: string,
  ): Promise<ConfirmedTx>;
  /** Registers `code` on chain with a throw-away wallet (a cheap write from the administration wallet). */
  registerCode(code: string): Promise<ConfirmedTx>;
  /** A department with its own funded custodial wallet, registered on chain. Returns its wallet. */
  department(code: string): Promise<string>;
  /** The document registry's packed word for a token: the versions a decision sent now reviews. */
  documentWord(tokenId: bigint): Promise<bigint>;
  /** The reference two-stage workflow for `type` over departments [a, b] then [c, d]. */
  workflow(type: string, stage1: string[], stage2: string[]): Promise<ConfirmedTx>;
  index: pg.Pool;
  close(): Promise<void>;
}

export async function createDriver(stack: Stack): Promise<Driver> {
  // The stack's administrative connection (the API processes run as a role of their own): tests also set up and
  // inspect what the API's role may not touch.
  const config = loadConfig({ ...stack.env, DATABASE_URL: stack.databaseUrl });
  const core = await createCoreServices(config, createLogger("silent"));
  const index = new pg.Pool({ connectionString: stack.databaseUrl, max: 4, options: "-c search_path=index" });
  // An idle connection cut by a Postgres restart (the fault tests restart it) is dropped, not an uncaught error.
  index.on("error", () => {});
  const addresses = stack.deployment.contracts;
  const send: Driver["send"] = (kind, from, contract, data) =>
    core.gateway.send({ kind, from, to: addresses[contract], data });
  return {
    core,
    operator: stack.operatorAddress,
    admin: stack.adminAddress,
    addresses,
    index,
    send,
    registerCode: (code) =>
      send(
        "REGISTER_DEPARTMENT",
        stack.adminAddress,
        "ApprovalRegistry",
        registry.encodeFunctionData("registerDepartment", [b32(code), Wallet.createRandom().address, 0]),
      ),
    async department(code) {
      const wallet = await core.wallets.create("DEPARTMENT", code);
      await send(
        "REGISTER_DEPARTMENT",
        stack.adminAddress,
        "ApprovalRegistry",
        registry.encodeFunctionData("registerDepartment", [b32(code), wallet, 0]),
      );
      return wallet;
    },
    async documentWord(tokenId) {
      const data = documents.encodeFunctionData("packedDocumentsOf", [tokenId]);
      return BigInt(await core.provider.call({ to: addresses.DocumentRegistry, data }));
    },
    workflow(type, stage1, stage2) {
      const stage = (executionType: number, departments: string[]) => ({
        executionType,
        completion: 0,
        threshold: 0,
        onTimeout: 0,
        onRejection: 0,
        timeoutSeconds: 0,
        mandatoryMask: 0,
        departments: departments.map(b32),
      });
      return send(
        "REGISTER_WORKFLOW",
        stack.adminAddress,
        "ApprovalRegistry",
        registry.encodeFunctionData("registerWorkflow", [
          b32(type),
          id(`${type}-definition`),
          86_400n * 365n,
          [stage(0, stage1), stage(1, stage2)],
        ]),
      );
    },
    async close() {
      await index.end();
      await core.close();
    },
  };
}
