/**
 * The contracts' views, every call pinned to one block so that views and logs describe the same state. The
 * Interfaces are built here from abis/ rather than imported from the API: the tool checks the API, so it shares
 * none of its code beyond the ABIs.
 */
import { Contract, Interface, type JsonRpcProvider, type Result } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";
import type { Deployment } from "./deploymentFile.ts";

export const licenceTokenAbi = new Interface(LicenceTokenAbi as never);
export const documentRegistryAbi = new Interface(DocumentRegistryAbi as never);
export const approvalRegistryAbi = new Interface(ApprovalRegistryAbi as never);

const INTERFACES = {
  LicenceToken: licenceTokenAbi,
  DocumentRegistry: documentRegistryAbi,
  ApprovalRegistry: approvalRegistryAbi,
} as const;
export type ViewContract = keyof typeof INTERFACES;

export class ContractViews {
  readonly contracts: Deployment["contracts"];
  readonly #provider: JsonRpcProvider;
  readonly #blockTag: number;

  constructor(provider: JsonRpcProvider, contracts: Deployment["contracts"], blockTag: number) {
    this.#provider = provider;
    this.contracts = contracts;
    this.#blockTag = blockTag;
  }

  /** `contract.name(...args)` at the audited block, every output as ethers decodes it. */
  call(contract: ViewContract, name: string, ...args: unknown[]): Promise<Result> {
    const target = new Contract(this.contracts[contract], INTERFACES[contract], this.#provider);
    return target.getFunction(name).staticCallResult(...args, { blockTag: this.#blockTag });
  }

  async hasCode(address: string): Promise<boolean> {
    return (await this.#provider.getCode(address, this.#blockTag)) !== "0x";
  }
}

/** A stage's rule as registered (stage(), WorkflowStageRegistered); its departments by position, 16 bits each. */
export function stageRuleOf(stage: Result) {
  const [executionType, completion, threshold, mandatoryMask, count] = [
    stage.executionType,
    stage.completion,
    stage.threshold,
    stage.mandatoryMask,
    stage.departmentCount,
  ].map(Number);
  const ids = BigInt(stage.departmentIds);
  const departmentIds = Array.from({ length: count }, (_, p) => Number((ids >> BigInt(16 * p)) & 0xffffn));
  return { executionType, completion, threshold, mandatoryMask, departmentIds };
}
