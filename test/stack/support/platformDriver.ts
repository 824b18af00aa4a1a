/**
 * Drives the contracts through the real write path (the chain gateway: simulate, record in the outbox, broadcast,
 * receipt, wait for the index) as the operator and as departments' custodial wallets. Stack tests use it until
 * the HTTP endpoints of later issues exist, and alongside them afterwards.
 */
import { Interface, Wallet, encodeBytes32String, id, sha256, toUtf8Bytes, zeroPadValue, toBeHex } from "ethers";
import pg from "pg";
import {
  ApprovalRegistryAbi,
  DEPARTMENT_KEY_TYPES,
  DocumentRegistryAbi,
  LicenceTokenAbi,
} from "../../../abis/index.ts";
import { governanceWallet } from "../../../api/src/chain/governanceKey.ts";
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
  /** The administration wallet (ADMIN_ROLE): activation, escalations, suspensions. */
  admin: string;
  /** The governance key the stack gives its APIs (DEFAULT_ADMIN_ROLE): registers departments and workflows. */
  governance: string;
  /** The registry's EIP-712 domain (eip712Domain(), with the deployment's salt). */
  domain(): Promise<{ name: string; version: string; chainId: bigint; verifyingContract: string; salt: string }>;
  /**
   * `wallet`'s proof that it holds its key (DepartmentKey typed data): signed by `signer` (a wallet the test holds),
   * else by the stack's signer (a custodial wallet).
   */
  keyProof(code: string, wallet: string, custody: number, signer?: Pick<Wallet, "signTypedData">): Promise<string>;
  addresses: Stack["deployment"]["contracts"];
  send(
    kind: TxKind,
    from: string,
    contract: keyof Stack["deployment"]["contracts"],
    data: string,
  ): Promise<ConfirmedTx>;
  /** Registers `code` on chain with a throw-away wallet (a cheap write from the governance key). */
  registerCode(code: string): Promise<ConfirmedTx>;
  /** A department with its own funded custodial wallet, registered on chain. Returns its wallet. */
  department(code: string): Promise<string>;
  /**
   * The Decision a department would make now (stage and round from progressOf, the reviewed documents' latest
   * SHA-256 from the index, its next nonce, a deadline five minutes ahead): `decision` 1 Approved, 2 Rejected,
   * 3 ChangesRequested.
   */
  decisionNow(
    code: string,
    tokenId: bigint,
    options: { mask: number; remarks: string; decision?: number; reasonCode?: number },
  ): Promise<Record<string, unknown>>;
  /** `decide(decisionNow(...))` sent from the department's custodial wallet. */
  decide(
    code: string,
    wallet: string,
    tokenId: bigint,
    options: { mask: number; remarks: string; decision?: number; reasonCode?: number },
  ): Promise<ConfirmedTx>;
  /** The licence token's record of `tokenId` (owner, status as a number, reasonCode …), read from the chain. */
  licence(tokenId: bigint | number): Promise<Record<string, any>>;
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
  if (!config.governancePrivateKey) throw new Error("the stack gives its APIs no GOVERNANCE_PRIVATE_KEY");
  const governance = await governanceWallet(core.wallets, config.governancePrivateKey);
  const sendAsGovernance = async (kind: TxKind, data: string) => {
    await core.wallets.catchUpNonce(governance);
    return send(kind, governance, "ApprovalRegistry", data);
  };
  const domain: Driver["domain"] = async () => {
    const data = registry.encodeFunctionData("eip712Domain", []);
    const [, name, version, chainId, verifyingContract, salt] = registry.decodeFunctionResult(
      "eip712Domain",
      await core.provider.call({ to: addresses.ApprovalRegistry, data }),
    );
    return { name, version, chainId, verifyingContract, salt };
  };
  const keyProof: Driver["keyProof"] = async (code, wallet, custody, signer) => {
    const message = { code: b32(code), wallet, custody };
    const typed = { domain: await domain(), types: DEPARTMENT_KEY_TYPES, primaryType: "DepartmentKey", message };
    return signer ? signer.signTypedData(typed.domain, typed.types, message) : core.signer.signTypedData(wallet, typed);
  };
  const view = async (name: string, args: unknown[]) =>
    registry.decodeFunctionResult(
      name,
      await core.provider.call({ to: addresses.ApprovalRegistry, data: registry.encodeFunctionData(name, args) }),
    );
  const decisionNow: Driver["decisionNow"] = async (code, tokenId, options) => {
    const [departmentId] = await view("departmentByCode", [b32(code)]);
    const [record] = await view("departmentRecord", [departmentId]);
    const [progress] = await view("progressOf", [tokenId]);
    const { rows } = await index.query(
      `SELECT doc_index, latest_hash FROM documents WHERE token_id = $1 ORDER BY doc_index`,
      [tokenId.toString()],
    );
    const block = await core.provider.getBlock("latest");
    return {
      tokenId,
      departmentId,
      stage: progress.stage,
      round: progress.stageStartedAt,
      decision: options.decision ?? 1,
      reasonCode: options.reasonCode ?? 0,
      reviewedMask: options.mask,
      documents: rows
        .filter((r) => options.mask === 0 || (options.mask >> Number(r.doc_index)) & 1)
        .map((r) => r.latest_hash),
      remarksHash: sha(options.remarks),
      nonce: record.nonce,
      deadline: BigInt(block!.timestamp + 300),
    };
  };
  return {
    core,
    operator: stack.operatorAddress,
    admin: stack.adminAddress,
    governance,
    decisionNow,
    async decide(code, wallet, tokenId, options) {
      const decision = await decisionNow(code, tokenId, options);
      const kind = (["APPROVAL", "REJECT", "CHANGES_REQUESTED"] as const)[(options.decision ?? 1) - 1];
      return send(kind, wallet, "ApprovalRegistry", registry.encodeFunctionData("decide", [decision]));
    },
    domain,
    keyProof,
    addresses,
    index,
    send,
    async registerCode(code) {
      const wallet = Wallet.createRandom();
      const proof = await keyProof(code, wallet.address, 0, wallet);
      return sendAsGovernance(
        "REGISTER_DEPARTMENT",
        registry.encodeFunctionData("registerDepartment", [b32(code), wallet.address, 0, proof]),
      );
    },
    async department(code) {
      const wallet = await core.wallets.create("DEPARTMENT", code);
      await sendAsGovernance(
        "REGISTER_DEPARTMENT",
        registry.encodeFunctionData("registerDepartment", [b32(code), wallet, 0, await keyProof(code, wallet, 0)]),
      );
      return wallet;
    },
    async licence(tokenId) {
      const data = token.encodeFunctionData("licence", [tokenId]);
      return token.decodeFunctionResult("licence", await core.provider.call({ to: addresses.LicenceToken, data }))[0];
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
      return sendAsGovernance(
        "REGISTER_WORKFLOW",
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
