/**
 * An npm script run as a person runs it in a fresh terminal: `npm run <script>` as the leader of a process group of
 * its own (signal the group as a terminal or a service manager does), with none of the platform's settings in its
 * environment unless the test names them.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { settings } from "../../../api/src/config.ts";
import { REPO_ROOT } from "../../../scripts/stack/stack.ts";

/** The environment of a fresh terminal: no platform setting (nor ENV_FILE), only what `extra` names. */
export function terminalEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const setting of Object.values(settings)) delete env[setting.env];
  delete env.ENV_FILE;
  return { ...env, ...extra };
}

export function npmRun(script: string, env: NodeJS.ProcessEnv) {
  const child = spawn("npm", ["run", "--silent", script], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => output,
    /** Signals the whole group (npm and what it started), if it still runs. */
    signal(name: NodeJS.Signals) {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, name);
    },
  };
}

/** A `.env` file as an operator writes one: NAME="value" lines (values without quotes, backslashes or newlines). */
export async function writeEnvFile(file: string, values: Record<string, string | undefined>): Promise<void> {
  const lines = Object.entries(values)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => {
      if (/["\\\n]/.test(value!)) throw new Error(`${name}: a value this helper does not quote`);
      return `${name}="${value}"`;
    });
  await writeFile(file, `# written by a test\n${lines.join("\n")}\n`, { mode: 0o600 });
}
