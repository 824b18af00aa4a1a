import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

/** Runs the API process alone with exactly `env` (plus PATH); resolves with how it ended. */
export async function runApiAlone(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const main = path.join(process.cwd(), "api", "src", "main.ts");
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [main], {
      env: { PATH: process.env.PATH!, ...env },
      timeout: 60_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number | null; stdout: string; stderr: string };
    return { code: failure.code, output: `${failure.stdout}${failure.stderr}` };
  }
}
