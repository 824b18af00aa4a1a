/**
 * The browser tests need Chromium, which npm cannot provide offline (Playwright's own download needs the internet):
 * Debian's `chromium` package is used instead. This installs it when it is missing and we may (root, apt-get);
 * otherwise it says what to do. Run by `npm test` in the background while the contract suites run.
 */
import { spawn } from "node:child_process";
import { access } from "node:fs/promises";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("close", (code) => resolve({ code, output }));
    child.on("error", (error) => resolve({ code: -1, output: String(error) }));
  });
}

/** Resolves with the path to Chromium, installing it first if needed; rejects with the reason it cannot. */
export async function ensureChromium(log: (line: string) => void = () => {}): Promise<string> {
  if (await exists(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0 || !(await exists("/usr/bin/apt-get"))) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  log("installing Debian's chromium for the browser tests (apt-get, about a minute)…");
  let result = await run("apt-get", ["install", "-y", "--no-install-recommends", "chromium"]);
  if (result.code !== 0) {
    await run("apt-get", ["update"]);
    result = await run("apt-get", ["install", "-y", "--no-install-recommends", "chromium"]);
  }
  if (result.code !== 0 || !(await exists(CHROMIUM)))
    throw new Error(`could not install chromium:\n${result.output.slice(-2000)}`);
  return CHROMIUM;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await ensureChromium(console.log));
}
