/**
 * `npm run audit -- --rpc URL --deployment FILE (--token N | --all) [--compare BASE_URL] [--json] [--expect-origin URL]`: the auditor's
 * tool. Recomputes licences from chain logs and contract calls alone, so a stranger with an RPC endpoint, the
 * deployment file and the ABIs can check what the platform says: the deployed code against the reviewed build
 * (abis/build.json), who governs, role holders over time, the contracts' wiring,
 * department wallet changes and their delays, who signed each decision and how it reached the chain (a passkey
 * department's reviewers' assertions verified here), and that
 * every issued licence had its stages complete on the versions current at issuance. `--compare` checks the
 * API's public answers against it. Exit status 0: consistent (and agreeing); 1: findings or differences; 2: no audit could be made.
 */
import { JsonRpcProvider } from "ethers";
import { compareWithApi, type Difference } from "./audit/apiCompare.ts";
import { auditChain } from "./audit/chainAudit.ts";
import { parseOptions, USAGE, UsageError } from "./audit/cliOptions.ts";
import { readDeployment } from "./audit/deploymentFile.ts";
import { readReviewedBuild } from "./audit/reviewedBuild.ts";
import { auditText, differencesText } from "./audit/report.ts";

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (options === "help") {
    console.log(USAGE);
    return 0;
  }
  const deployment = await readDeployment(options.deploymentFile);
  const build = await readReviewedBuild(options.buildFile);
  // staticNetwork: one endpoint, one chain; ethers would otherwise retry an unreachable node for ever.
  const provider = new JsonRpcProvider(options.rpcUrl, undefined, { staticNetwork: true });
  try {
    const audit = await auditChain(provider, deployment, options.target, {
      chunkBlocks: options.chunkBlocks,
      build,
      expectOrigin: options.expectOrigin,
    });
    let differences: Difference[] | undefined;
    if (options.compareUrl) {
      differences = await compareWithApi(options.compareUrl, audit).catch((error: Error) => {
        throw new Error(
          `cannot reach the API at ${options.compareUrl}: ${error.message}${error.cause ? ` (${(error.cause as Error).message})` : ""}`,
        );
      });
    }
    const findings = audit.findings.length + audit.licences.reduce((n, l) => n + l.findings.length, 0);
    const ok = findings === 0 && (differences?.length ?? 0) === 0;
    if (options.json) {
      console.log(
        JSON.stringify(
          { ...audit, ...(differences ? { comparison: { baseUrl: options.compareUrl, differences } } : {}), ok },
          null,
          2,
        ),
      );
    } else {
      console.log(auditText(audit));
      if (differences) console.log(`\n${differencesText(options.compareUrl!, differences)}`);
      console.log(
        `\n${ok ? "OK" : "NOT OK"}: ${audit.licences.length} licence(s), ${findings} finding(s)${differences ? `, ${differences.length} difference(s) with the API` : ""}`,
      );
    }
    return ok ? 0 : 1;
  } finally {
    provider.destroy();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else console.error(`audit failed: ${(error as Error).message}`);
  process.exitCode = 2;
}
