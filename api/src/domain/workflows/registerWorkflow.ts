/**
 * Registers a workflow version on chain (compact form + definition hash) with its full definition off chain, in the
 * same database transaction as the outbox record. The chain makes it the active version of its type.
 */
import { randomUUID } from "node:crypto";
import { encodeBytes32String } from "ethers";
import { approvalRegistry } from "../../chain/contracts.ts";
import type { CreateWorkflowInput } from "../../schemas/workflow.ts";
import type { DomainContext } from "../context.ts";
import { compileStages, definitionHash, sortedStages } from "./compileWorkflow.ts";
import type { StoredWorkflow } from "./workflowStore.ts";

export async function registerWorkflow(context: DomainContext, input: CreateWorkflowInput): Promise<{ workflow: StoredWorkflow; transactionHash: string }> {
  const id = randomUUID();
  const hash = definitionHash(id, input);
  const validitySeconds = (context.config.licenceValidityDays[input.workflowType] ?? 365) * 86_400;
  const data = approvalRegistry.encodeFunctionData("registerWorkflow", [
    encodeBytes32String(input.workflowType),
    hash,
    BigInt(validitySeconds),
    compileStages(input.stages),
  ]);
  const tx = await context.gateway.send(
    { kind: "REGISTER_WORKFLOW", from: context.operator, to: context.contracts.ApprovalRegistry, data },
    {
      onRecorded: async (client, recorded) => {
        await client.query(
          `INSERT INTO workflows (id, workflow_type, name, description, stages, definition_hash, validity_seconds, chain_tx_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [id, input.workflowType, input.name, input.description ?? null, JSON.stringify(sortedStages(input.stages)), hash, validitySeconds, recorded.id],
        );
      },
    },
  );
  const workflow = await context.workflows.byId(id);
  if (!workflow) throw new Error(`workflow ${id} confirmed on chain but not indexed in time`);
  return { workflow, transactionHash: tx.hash };
}
