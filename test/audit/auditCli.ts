/**
 * The auditor's tool as an auditor runs it: `node scripts/audit.ts --rpc URL --deployment FILE --json …`, a child
 * process, with its exit status and its JSON report.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

export interface AuditRun {
  code: number;
  report: any;
  stderr: string;
}

export async function runAudit(rpcUrl: string, deploymentFile: string, ...args: string[]): Promise<AuditRun> {
  const argv = ["scripts/audit.ts", "--rpc", rpcUrl, "--deployment", deploymentFile, "--json", ...args];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { cwd: REPO_ROOT, maxBuffer: 64 << 20 });
    return { code: 0, report: JSON.parse(stdout), stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout: string; stderr: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, report: failed.stdout ? JSON.parse(failed.stdout) : undefined, stderr: failed.stderr };
  }
}
