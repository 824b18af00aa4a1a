/**
 * The auditor's tool as an auditor runs it: `node scripts/audit.ts --rpc URL --deployment FILE …`, a child process,
 * with its exit status and its JSON report (`runAudit`) or its text (`auditText`).
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

async function tool(rpcUrl: string, deploymentFile: string, args: string[]) {
  const argv = ["scripts/audit.ts", "--rpc", rpcUrl, "--deployment", deploymentFile, ...args];
  try {
    return { code: 0, ...(await run(process.execPath, argv, { cwd: REPO_ROOT, maxBuffer: 64 << 20 })) };
  } catch (error) {
    const failed = error as { code?: unknown; stdout: string; stderr: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

export async function runAudit(rpcUrl: string, deploymentFile: string, ...args: string[]): Promise<AuditRun> {
  const { code, stdout, stderr } = await tool(rpcUrl, deploymentFile, ["--json", ...args]);
  return { code, report: code === 0 || stdout ? JSON.parse(stdout) : undefined, stderr };
}

/** The report as a person reads it (no --json), whatever the exit status. */
export const auditText = async (rpcUrl: string, deploymentFile: string, ...args: string[]) =>
  (await tool(rpcUrl, deploymentFile, args)).stdout;
