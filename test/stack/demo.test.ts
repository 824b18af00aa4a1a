/** `npm run demo` against the running stack: every step prints its transaction, and the licence ends up VALID. */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { current } from "./support/stackFixture.ts";

describe("npm run demo (against the running stack)", function () {
  it("walks one licence from creation to issuance, printing each transaction, the verification URL and a QR code", async function () {
    const stack = current();
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(process.cwd(), "scripts", "demo.ts")], {
      // BUILDING_PERMIT: other stack tests expect RESORT_LICENSE's versions and TRADE_LICENSE to have no workflow.
      env: { ...process.env, ...stack.env, API_URL: stack.api.url, DEMO_TYPE: "BUILDING_PERMIT" },
      maxBuffer: 4 * 1024 * 1024,
    });
    const hashes = [...stdout.matchAll(/tx (0x[0-9a-f]{64})/g)].map((m) => m[1]);
    // Two departments, the workflow, mint, anchor, submit, changes, new version, resubmit, two approvals.
    expect(hashes).to.have.length(11);
    for (const hash of hashes) {
      const receipt = await fetch(stack.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionReceipt", params: [hash] }),
      }).then((r) => r.json() as Promise<{ result: { status: string } }>);
      expect(receipt.result.status, hash).to.equal("0x1");
    }
    expect(stdout)
      .to.match(/asks for changes/)
      .and.to.match(/licence is issued/);
    // The fire department decided with a key the platform never held: the chain names it as the signer.
    const fireKey = /the chain checks it is (0x[0-9a-fA-F]{40})'s/.exec(stdout)?.[1];
    expect(fireKey, "the signed approval step").to.be.a("string");
    const signedApproval = await fetch(stack.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionReceipt", params: [hashes.at(-1)] }),
    }).then((r) => r.json() as Promise<{ result: { logs: { data: string }[] } }>);
    expect(
      signedApproval.result.logs.some((log) => log.data.toLowerCase().includes(fireKey!.slice(2).toLowerCase())),
    ).to.equal(true);
    expect(stdout).to.match(/proves the licence is theirs .*: matches/);
    const token = /verify\?token=(\d+)/.exec(stdout)?.[1];
    expect(token).to.be.a("string");
    expect(stdout).to.include(`${stack.api.url}/verify?token=${token}`);
    const verdict = (await (await fetch(`${stack.api.url}/api/v1/verify/${token}`)).json()) as {
      verdict: string;
      approvals: unknown[];
    };
    expect(verdict.verdict).to.equal("VALID");
    expect(verdict.approvals).to.have.length(2);
    // The QR code drawn with block characters.
    expect(stdout).to.match(/[▀▄█]{10,}/);
    // Then a reviewer's invitation to the console, at localhost (an IP address cannot be a passkey's RP ID), whose
    // token opens a passkey registration once.
    const port = new URL(stack.api.url).port;
    const invitationToken = new RegExp(`http://localhost:${port}/console/#/invite/([\\w-]+)`).exec(stdout)?.[1];
    expect(invitationToken, "the invitation link").to.be.a("string");
    expect(stdout).to.include(`sign in with that passkey at http://localhost:${port}/console/`);
    const options = await fetch(`${stack.api.url}/api/v1/console/invitations/registration-options`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: invitationToken, deviceName: "demo laptop" }),
    });
    expect(options.status).to.equal(200);
    expect(((await options.json()) as { options: { rp: { id: string } } }).options.rp.id).to.equal("localhost");
  });
});
