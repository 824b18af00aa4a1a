/**
 * Who decides is governance's: registering a department, proposing a department's new wallet and registering a
 * workflow version need DEFAULT_ADMIN_ROLE. Where one key governs (the development chain's deployer, or
 * GOVERNANCE_PRIVATE_KEY), the API sends them from it. Otherwise (a Safe governs) the API sends nothing and records
 * nothing: the answer is 202 AWAITING_GOVERNANCE with the transaction for governance to execute
 * (docs/decisions.md, "Governance executes who decides").
 */
import type { ConfirmedTx, SendOptions, TxRequest } from "../chain/chainGateway.ts";
import type { DomainContext } from "./context.ts";

export interface AwaitingGovernance {
  status: "AWAITING_GOVERNANCE";
  message: string;
  /** The call for governance (e.g. the Safe's owners) to execute, exactly as the API would have sent it. */
  transaction: { to: string; data: string; value: "0"; chainId: number };
}

export function isAwaitingGovernance(value: unknown): value is AwaitingGovernance {
  return (value as AwaitingGovernance | undefined)?.status === "AWAITING_GOVERNANCE";
}

/** The governance transaction this API cannot send, as the answer that hands it to governance. */
export function awaitingGovernance(context: DomainContext, data: string, what: string): AwaitingGovernance {
  return {
    status: "AWAITING_GOVERNANCE",
    message: `${what} needs governance (DEFAULT_ADMIN_ROLE), whose key this API does not hold: execute transaction from governance (e.g. as a Safe transaction); nothing was recorded here`,
    transaction: { to: context.contracts.ApprovalRegistry, data, value: "0", chainId: context.config.chainId },
  };
}

/** Sends `request` from the governance key; undefined when this API holds none (the caller answers 202). */
export async function sendAsGovernance(
  context: DomainContext,
  request: Omit<TxRequest, "from">,
  options: SendOptions = {},
): Promise<ConfirmedTx | undefined> {
  if (!context.governance) return undefined;
  const from = await context.governance.ready();
  return context.gateway.send({ ...request, from }, options);
}
