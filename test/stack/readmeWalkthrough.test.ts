/**
 * The README's walkthrough ("A first licence, by hand"), run as written: its bash blocks, in order, in one shell,
 * against a fresh `npm start` whose printed ID=, SECRET= and API= lines are pasted first, as the README says. So
 * the README cannot drift from the product.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { freePort } from "../../scripts/stack/ports.ts";
import { REPO_ROOT } from "../../scripts/stack/stack.ts";

/** The ```bash blocks of the README section `heading`, in order. */
export async function walkthroughBlocks(heading = "### A first licence, by hand"): Promise<string[]> {
  const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
  const start = readme.indexOf(heading);
  if (start < 0) throw new Error(`README.md has no section "${heading}"`);
  const rest = readme.slice(start + heading.length);
  const next = rest.search(/^#{2,3} /m);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

describe("the README walkthrough, as written, against a fresh npm start", function () {
  let dataDir: string;
  let scratch: string;
  let stack: ReturnType<typeof spawn> | undefined;
  let printed = "";

  before(async function () {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "readme-stack-"));
    scratch = await mkdtemp(path.join(os.tmpdir(), "readme-scratch-"));
    const env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      CHAIN_PORT: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      INDEXER_PORT: String(await freePort()),
      API_PROCESSES: "1",
      DATABASE_URL: "",
      CHAIN_RPC_URL: "",
    };
    stack = spawn(process.execPath, [path.join(REPO_ROOT, "scripts", "start.ts")], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    stack.stdout!.on("data", (d) => (printed += d));
    stack.stderr!.on("data", (d) => (printed += d));
    const deadline = Date.now() + 120_000;
    while (!printed.includes("Press Ctrl-C to stop.")) {
      if (Date.now() > deadline || stack.exitCode !== null) throw new Error(`npm start did not get ready:\n${printed}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    if (stack && stack.exitCode === null) {
      const exited = new Promise((resolve) => stack!.once("exit", resolve));
      stack.kill("SIGINT");
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  it("has the sign-in step in a block of its own, between the administrator's blocks and the request's", async function () {
    const blocks = await walkthroughBlocks();
    expect(blocks.length).to.be.at.least(3);
    const signIn = blocks.filter((b) => b.includes("identitylocker"));
    expect(signIn).to.have.length(1);
    expect(signIn[0]).to.not.match(/\/departments|\/requests/);
  });

  it("ends with the licence verified, every step working as shown", async function () {
    // What the README tells the reader to paste: the three lines npm start printed.
    const pasted = printed.split("\n").filter((line) => /^(ID|SECRET|API)=\S+$/.test(line));
    expect(pasted.map((l) => l.split("=")[0])).to.deep.equal(["ID", "SECRET", "API"]);
    const script = ["set -euo pipefail", ...pasted, ...(await walkthroughBlocks())].join("\n");
    const { stdout, stderr } = await promisify(execFile)("bash", ["-c", script], {
      cwd: scratch,
      env: { PATH: process.env.PATH, HOME: os.homedir() },
      timeout: 120_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    const output = `${stdout}\n${stderr}`;
    expect(output).to.include('"verdict": "VALID"');
    expect(output).to.include('"isValid": true');
    expect(output).to.match(/"requestNumber": "BP-\d{4}-000001"/);
    expect(output).to.match(/"departmentCode": "FIRE",\s+"stage": 1/);
    expect(output).to.match(/Open http:\/\/127\.0\.0\.1:\d+\/verify\?token=\d+ in a browser/);
    expect(output, /[^\n]{0,120}(null|error)[^\n]{0,120}/i.exec(output)?.[0]).to.not.match(/null|error/i);
    // The link it prints opens the verdict for anyone.
    const link = /Open (\S+) in a browser/.exec(output)![1];
    expect((await fetch(link)).status).to.equal(200);
  });
});
