/** `npm run demo` finds the running stack on its DATA_DIR whatever PORT says, and says clearly when no API answers. */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { freePort } from "../../scripts/stack/ports.ts";
import { current } from "./support/stackFixture.ts";

const demo = (env: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, [path.join(process.cwd(), "scripts", "demo.ts")], {
    env,
    maxBuffer: 4 * 1024 * 1024,
    timeout: 150_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      output: `${error.stdout ?? ""}${error.stderr ?? ""}`,
    }),
  );

/** A terminal's environment: no API_URL, a PORT that is not the stack's. */
function terminal(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ["API_URL", "PORT", "PUBLIC_BASE_URL", "ADMIN_CLIENT_ID", "ADMIN_CLIENT_SECRET"]) delete env[name];
  return { ...env, ...extra };
}

describe("npm run demo finds the platform", function () {
  it("follows the stack running on DATA_DIR when its API moved to another port", async function () {
    const stack = current();
    const { code, output } = await demo(
      terminal({ DATA_DIR: stack.config.dataDir, PORT: String(await freePort()), DEMO_TYPE: "BUILDING_PERMIT" }),
    );
    expect(code, output).to.equal(0);
    expect(output).to.include(`Licence approval demo against ${stack.api.url}/api/v1`);
    expect(output).to.match(/licence is issued/);
  });

  it("says clearly that no API answers, and writes nothing", async function () {
    const empty = await mkdtemp(path.join(os.tmpdir(), "demo-nostack-"));
    try {
      const port = await freePort();
      const { code, output } = await demo(terminal({ DATA_DIR: empty, PORT: String(port) }));
      expect(code).to.equal(1);
      expect(output).to.include(`No licence approval API answers at http://127.0.0.1:${port}.`);
      expect(output).to.include("npm start");
      expect(output).to.not.match(/at .*\.ts:\d+/); // a message, not a stack trace
      expect(await readdir(empty)).to.deep.equal([]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
