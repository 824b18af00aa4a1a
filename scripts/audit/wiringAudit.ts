/**
 * How the contracts are wired, from their views and wiring events: each must point at the deployment's others, the
 * approval registry set exactly once. A second wiring event, or any other address, would mean someone other than
 * the departments could drive a review.
 */
import { getAddress } from "ethers";
import type { ContractViews, ViewContract } from "./contractViews.ts";
import type { Deployment } from "./deploymentFile.ts";
import type { ChainEvent } from "./logReader.ts";
import { shortWalletDelay } from "./walletDelayPolicy.ts";

export interface WiringEvent {
  registry: string;
  transactionHash: string;
  blockNumber: number;
}

export interface WiringAudit {
  tokenApprovalRegistry: string;
  documentReviewRegistry: string;
  documentLicenceToken: string;
  registryLicenceToken: string;
  registryDocumentRegistry: string;
  decisionVerifier: string;
  decisionVerifierHasCode: boolean;
  walletDelay: number;
  approvalRegistrySet: WiringEvent[];
  reviewRegistrySet: WiringEvent[];
}

export async function readWiring(views: ContractViews, platformEvents: ChainEvent[]): Promise<WiringAudit> {
  const view = async (contract: ViewContract, name: string) => (await views.call(contract, name))[0];
  const [
    tokenApprovalRegistry,
    documentReviewRegistry,
    documentLicenceToken,
    registryLicenceToken,
    registryDocumentRegistry,
    decisionVerifier,
  ] = (
    await Promise.all([
      view("LicenceToken", "approvalRegistry"),
      view("DocumentRegistry", "reviewRegistry"),
      view("DocumentRegistry", "licenceToken"),
      view("ApprovalRegistry", "licenceToken"),
      view("ApprovalRegistry", "documentRegistry"),
      view("ApprovalRegistry", "decisionVerifier"),
    ])
  ).map((address) => getAddress(address));
  const wiring = (name: string, contract: string) =>
    platformEvents
      .filter((e) => e.name === name && e.address === contract)
      .map((e) => ({
        registry: getAddress(e.args.registry),
        transactionHash: e.transactionHash,
        blockNumber: e.blockNumber,
      }));
  return {
    tokenApprovalRegistry,
    documentReviewRegistry,
    documentLicenceToken,
    registryLicenceToken,
    registryDocumentRegistry,
    decisionVerifier,
    decisionVerifierHasCode: await views.hasCode(decisionVerifier),
    walletDelay: Number(await view("ApprovalRegistry", "walletDelay")),
    approvalRegistrySet: wiring("ApprovalRegistrySet", views.contracts.LicenceToken),
    reviewRegistrySet: wiring("ReviewRegistrySet", views.contracts.DocumentRegistry),
  };
}

export function wiringFindings(w: WiringAudit, deployment: Deployment): string[] {
  const { contracts } = deployment;
  const findings: string[] = [];
  const expect = (what: string, actual: string, expected: string, name: string) => {
    if (getAddress(actual) !== expected)
      findings.push(`${what} is ${actual}, not the deployment's ${name} ${expected}`);
  };
  expect("LicenceToken.approvalRegistry()", w.tokenApprovalRegistry, contracts.ApprovalRegistry, "ApprovalRegistry");
  expect("DocumentRegistry.reviewRegistry()", w.documentReviewRegistry, contracts.ApprovalRegistry, "ApprovalRegistry");
  expect("DocumentRegistry.licenceToken()", w.documentLicenceToken, contracts.LicenceToken, "LicenceToken");
  expect("ApprovalRegistry.licenceToken()", w.registryLicenceToken, contracts.LicenceToken, "LicenceToken");
  expect(
    "ApprovalRegistry.documentRegistry()",
    w.registryDocumentRegistry,
    contracts.DocumentRegistry,
    "DocumentRegistry",
  );
  expect("ApprovalRegistry.decisionVerifier()", w.decisionVerifier, contracts.DecisionVerifier, "DecisionVerifier");
  if (!w.decisionVerifierHasCode)
    findings.push(`the decision verifier ${w.decisionVerifier} has no code: no signed decision could be checked`);
  if (w.walletDelay !== deployment.walletDelay)
    findings.push(
      `ApprovalRegistry.walletDelay() is ${w.walletDelay} s but the deployment file says ${deployment.walletDelay} s`,
    );
  const short = shortWalletDelay(deployment.chainId, w.walletDelay);
  if (short) findings.push(`ApprovalRegistry.walletDelay() is ${short}`);
  for (const [name, events] of [
    ["ApprovalRegistrySet (LicenceToken)", w.approvalRegistrySet],
    ["ReviewRegistrySet (DocumentRegistry)", w.reviewRegistrySet],
  ] as const) {
    if (events.length !== 1)
      findings.push(`${name} was emitted ${events.length} times: the approval registry is wired exactly once`);
    for (const e of events) {
      if (e.registry !== contracts.ApprovalRegistry)
        findings.push(
          `${name} wired ${e.registry} at block ${e.blockNumber} (tx ${e.transactionHash}), not the deployment's ApprovalRegistry ${contracts.ApprovalRegistry}`,
        );
    }
  }
  return findings;
}
