/**
 * Departments (each with its own funded custodial wallet, registered on chain) and a workflow registered through
 * the real use case, for tests that need a request type to be open before the departments capability's HTTP routes.
 */
import { applicantAddresses } from "../../../api/src/chain/applicantKeys.ts";
import { departmentWallets } from "../../../api/src/chain/departmentWallets.ts";
import { governanceKey } from "../../../api/src/chain/governanceKey.ts";
import { secretSealer } from "../../../api/src/chain/secretSealer.ts";
import { createLogger } from "../../../api/src/observability/logger.ts";
import { loadConfig } from "../../../api/src/config.ts";
import type { DomainContext } from "../../../api/src/domain/context.ts";
import { registerWorkflow } from "../../../api/src/domain/workflows/registerWorkflow.ts";
import { WorkflowStore } from "../../../api/src/stores/workflowStore.ts";
import type { CreateWorkflowInput } from "../../../api/src/routes/schemas/workflow.ts";
import type { Stack } from "../../../scripts/stack/stack.ts";
import type { Driver } from "./platformDriver.ts";

export function domainContext(stack: Stack, driver: Driver): DomainContext {
  const config = loadConfig(stack.env);
  return {
    config,
    pool: driver.core.pool,
    gateway: driver.core.gateway,
    operator: stack.operatorAddress,
    administrator: stack.adminAddress,
    governance: governanceKey(driver.core.wallets, driver.governance),
    contracts: stack.deployment.contracts,
    workflows: new WorkflowStore(driver.core.pool),
    documentStore: undefined as never,
    logger: createLogger("silent"),
    applicantAddress: applicantAddresses("0x" + "00".repeat(32)),
    departmentWallets: departmentWallets(driver.core.signer),
    departmentSecrets: secretSealer(driver.core.vault, "department-api-secret"),
    webhookSecrets: secretSealer(driver.core.vault, "webhook-secret"),
    credentialSigner: undefined as never,
  };
}

/** Registers the departments (unless they exist) and the workflow; returns the department wallets by code. */
export async function seedWorkflow(stack: Stack, driver: Driver, input: CreateWorkflowInput) {
  const wallets: Record<string, string> = {};
  const codes = [...new Set(input.stages.flatMap((s) => s.requiredApprovals.map((a) => a.departmentCode)))];
  for (const code of codes) {
    // A custodial wallet of ours, or a department registered with its own key (index only).
    const existing =
      (await driver.core.wallets.findByPurpose("DEPARTMENT", code)) ??
      (await driver.index.query(`SELECT wallet FROM departments WHERE code = $1`, [code])).rows[0]?.wallet;
    wallets[code] = existing ?? (await driver.department(code));
  }
  const registered = await registerWorkflow(domainContext(stack, driver), input);
  if (!("workflow" in registered)) throw new Error("the stack's governance key did not register the workflow");
  return { workflow: registered.workflow, wallets };
}
