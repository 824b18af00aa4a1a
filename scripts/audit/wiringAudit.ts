/**
 * How the contracts are wired, from their views and wiring events: each must point at the deployment's others, the
 * approval registry set exactly once. A second wiring event, or any other address, would mean someone other than
 * the departments could drive a review.
 */
import { getAddress } from "ethers";
import type { ContractViews } from "./contractViews.ts";
import type { ContractName, Deployment } from "./deploymentFile.ts";
import type { ChainEvent } from "./logReader.ts";
import { shortWalletDelay } from "./walletDelayPolicy.ts";

export interface WiringEvent {
  registry: string;
  transactionHash: string;
  blockNumber: number;
}

/** Each address a contract holds of another: the audit's field, the view that answers it, whom it must name. */
const POINTERS = [
  ["tokenApprovalRegistry", "LicenceToken", "approvalRegistry", "ApprovalRegistry"],
  ["documentReviewRegistry", "DocumentRegistry", "reviewRegistry", "ApprovalRegistry"],
  ["documentLicenceToken", "DocumentRegistry", "licenceToken", "LicenceToken"],
  ["registryLicenceToken", "ApprovalRegistry", "licenceToken", "LicenceToken"],
  ["registryDocumentRegistry", "ApprovalRegistry", "documentRegistry", "DocumentRegistry"],
  ["decisionVerifier", "ApprovalRegistry", "decisionVerifier", "DecisionVerifier"],
] as const;

/** The events that wire the approval registry in, by the contract that emits them. */
const WIRING_EVENTS = [
  ["approvalRegistrySet", "ApprovalRegistrySet", "LicenceToken"],
  ["reviewRegistrySet", "ReviewRegistrySet", "DocumentRegistry"],
] as const;

export type WiringAudit = Record<(typeof POINTERS)[number][0], string> &
  Record<(typeof WIRING_EVENTS)[number][0], WiringEvent[]> & { decisionVerifierHasCode: boolean; walletDelay: number };

export async function readWiring(views: ContractViews, platformEvents: ChainEvent[]): Promise<WiringAudit> {
  const pointers = await Promise.all(
    POINTERS.map(async ([field, contract, view]) => [field, getAddress((await views.call(contract, view))[0])]),
  );
  const wiring = Object.fromEntries(pointers);
  const events = WIRING_EVENTS.map(([field, name, contract]) => [
    field,
    platformEvents
      .filter((e) => e.name === name && e.address === views.contracts[contract])
      .map((e) => ({
        registry: getAddress(e.args.registry),
        transactionHash: e.transactionHash,
        blockNumber: e.blockNumber,
      })),
  ]);
  return {
    ...wiring,
    decisionVerifierHasCode: await views.hasCode(wiring.decisionVerifier),
    walletDelay: Number((await views.call("ApprovalRegistry", "walletDelay"))[0]),
    ...Object.fromEntries(events),
  };
}

export function wiringFindings(w: WiringAudit, deployment: Deployment): string[] {
  const { contracts } = deployment;
  const findings: string[] = [];
  for (const [field, contract, view, target] of POINTERS)
    if (getAddress(w[field]) !== contracts[target as ContractName])
      findings.push(`${contract}.${view}() is ${w[field]}, not the deployment's ${target} ${contracts[target]}`);
  if (!w.decisionVerifierHasCode)
    findings.push(`the decision verifier ${w.decisionVerifier} has no code: no signed decision could be checked`);
  if (w.walletDelay !== deployment.walletDelay)
    findings.push(
      `ApprovalRegistry.walletDelay() is ${w.walletDelay} s but the deployment file says ${deployment.walletDelay} s`,
    );
  const short = shortWalletDelay(deployment.chainId, w.walletDelay);
  if (short) findings.push(`ApprovalRegistry.walletDelay() is ${short}`);
  for (const [field, name, contract] of WIRING_EVENTS) {
    const label = `${name} (${contract})`;
    if (w[field].length !== 1)
      findings.push(`${label} was emitted ${w[field].length} times: the approval registry is wired exactly once`);
    for (const e of w[field])
      if (e.registry !== contracts.ApprovalRegistry)
        findings.push(
          `${label} wired ${e.registry} at block ${e.blockNumber} (tx ${e.transactionHash}), not the deployment's ApprovalRegistry ${contracts.ApprovalRegistry}`,
        );
  }
  return findings;
}
