/**
 * The contracts' view functions the auditor calls, typed, every call pinned to one block so that views and logs
 * describe the same state. The Interfaces are built here from abis/ rather than imported from the API: the tool
 * checks the API, so it shares none of its code beyond the ABIs.
 */
import { Interface, getAddress, type JsonRpcProvider } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";
import type { Deployment } from "./deploymentFile.ts";

export const licenceTokenAbi = new Interface(LicenceTokenAbi as never);
export const documentRegistryAbi = new Interface(DocumentRegistryAbi as never);
export const approvalRegistryAbi = new Interface(ApprovalRegistryAbi as never);

export interface LicenceRecord {
  owner: string;
  status: number;
  reasonCode: number;
  workflowId: number;
  expiresAt: number;
}

export interface AnchorRecord {
  documentId: string;
  tokenId: number;
  docIndex: number;
  version: number;
  blockNumber: number;
  timestamp: number;
  isLatest: boolean;
}

const INTERFACES = {
  LicenceToken: licenceTokenAbi,
  DocumentRegistry: documentRegistryAbi,
  ApprovalRegistry: approvalRegistryAbi,
} as const;

export class ContractViews {
  readonly #provider: JsonRpcProvider;
  readonly #contracts: Deployment["contracts"];
  readonly #blockTag: number;

  constructor(provider: JsonRpcProvider, contracts: Deployment["contracts"], blockTag: number) {
    this.#provider = provider;
    this.#contracts = contracts;
    this.#blockTag = blockTag;
  }

  get contracts(): Deployment["contracts"] {
    return this.#contracts;
  }

  /** A no-argument view returning an address (the wiring getters). */
  async address(contract: keyof typeof INTERFACES, name: string): Promise<string> {
    const [value] = await this.#call(INTERFACES[contract], this.#contracts[contract], name, []);
    return getAddress(value);
  }

  async walletDelay(): Promise<number> {
    const [delay] = await this.#call(approvalRegistryAbi, this.#contracts.ApprovalRegistry, "walletDelay", []);
    return Number(delay);
  }

  async hasCode(address: string): Promise<boolean> {
    return (await this.#provider.getCode(address, this.#blockTag)) !== "0x";
  }

  async #call(iface: Interface, to: string, name: string, args: unknown[]) {
    const data = await this.#provider.call({
      to,
      data: iface.encodeFunctionData(name, args),
      blockTag: this.#blockTag,
    });
    return iface.decodeFunctionResult(name, data);
  }

  /** Never reverts: validity UNKNOWN (0) is how the chain says the token does not exist. */
  async validityOf(tokenId: number) {
    const [validity, status, reasonCode, expiresAt] = await this.#call(
      licenceTokenAbi,
      this.#contracts.LicenceToken,
      "validityOf",
      [tokenId],
    );
    return {
      validity: Number(validity),
      status: Number(status),
      reasonCode: Number(reasonCode),
      expiresAt: Number(expiresAt),
    };
  }

  async licence(tokenId: number): Promise<LicenceRecord> {
    const [record] = await this.#call(licenceTokenAbi, this.#contracts.LicenceToken, "licence", [tokenId]);
    return {
      owner: record.owner,
      status: Number(record.status),
      reasonCode: Number(record.reasonCode),
      workflowId: Number(record.workflowId),
      expiresAt: Number(record.expiresAt),
    };
  }

  async documentsOf(tokenId: number) {
    const [phase, count, latestVersions] = await this.#call(
      documentRegistryAbi,
      this.#contracts.DocumentRegistry,
      "documentsOf",
      [tokenId],
    );
    return { phase: Number(phase), count: Number(count), latestVersions: (latestVersions as bigint[]).map(Number) };
  }

  async anchorOf(tokenId: number, sha256: string): Promise<AnchorRecord> {
    const [anchor, isLatest] = await this.#call(documentRegistryAbi, this.#contracts.DocumentRegistry, "anchorOf", [
      tokenId,
      sha256,
    ]);
    return {
      documentId: anchor.documentId,
      tokenId: Number(anchor.tokenId),
      docIndex: Number(anchor.docIndex),
      version: Number(anchor.version),
      blockNumber: Number(anchor.blockNumber),
      timestamp: Number(anchor.timestamp),
      isLatest,
    };
  }

  async progressOf(tokenId: number) {
    const [progress] = await this.#call(approvalRegistryAbi, this.#contracts.ApprovalRegistry, "progressOf", [tokenId]);
    return {
      workflowId: Number(progress.workflowId),
      stage: Number(progress.stage),
      phase: Number(progress.phase),
      maxStage: Number(progress.maxStage),
    };
  }

  async stageCountOf(workflowId: number): Promise<number> {
    const [workflow] = await this.#call(approvalRegistryAbi, this.#contracts.ApprovalRegistry, "workflow", [
      workflowId,
    ]);
    return Number(workflow.stageCount);
  }

  /** A stage's completion rule as registered: the departments by position (16 bits each). */
  async stageRule(workflowId: number, stageIndex: number) {
    const [stage] = await this.#call(approvalRegistryAbi, this.#contracts.ApprovalRegistry, "stage", [
      workflowId,
      stageIndex,
    ]);
    const count = Number(stage.departmentCount);
    const ids = BigInt(stage.departmentIds);
    return {
      completion: Number(stage.completion),
      threshold: Number(stage.threshold),
      mandatoryMask: Number(stage.mandatoryMask),
      departmentIds: Array.from({ length: count }, (_, p) => Number((ids >> BigInt(16 * p)) & 0xffffn)),
    };
  }

  /** Each position of the stage: department id and its current decision status. */
  async decisionsOf(
    tokenId: number,
    stage: number,
  ): Promise<{ departmentId: number; status: number; reviewedMask: number }[]> {
    const [ids, statuses, masks] = await this.#call(
      approvalRegistryAbi,
      this.#contracts.ApprovalRegistry,
      "decisionsOf",
      [tokenId, stage],
    );
    return (ids as bigint[]).map((id, p) => ({
      departmentId: Number(id),
      status: Number(statuses[p]),
      reviewedMask: Number(masks[p]),
    }));
  }

  async departmentRecord(departmentId: number) {
    const [record] = await this.#call(approvalRegistryAbi, this.#contracts.ApprovalRegistry, "departmentRecord", [
      departmentId,
    ]);
    return {
      code: record.code as string,
      wallet: getAddress(record.wallet),
      custody: Number(record.custody),
      active: record.active as boolean,
      pendingWallet: getAddress(record.pendingWallet),
      pendingEffectiveAt: Number(record.pendingEffectiveAt),
    };
  }
}
