/**
 * What the security review of f94e6d1 found (issue 15), each finding with the behaviour that closes it, on the real
 * stack. Findings that depend on production settings run against an extra API process started with NODE_ENV=production
 * on the fixture's database and chain.
 */
import { expect } from "chai";
import type { ApiHandle } from "../../scripts/stack/stack.ts";
import { deliver } from "../../api/src/webhooks/deliver.ts";
import { checkWebhookUrl, isAllowedAddress } from "../../api/src/webhooks/urlSafety.ts";
import { clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { current } from "./support/stackFixture.ts";
import { startReceiver } from "./support/webhookReceiver.ts";

describe("security review of f94e6d1 (issue 15)", function () {
  const tag = String(Date.now() % 1e8).replace(/\d/g, (d) => "ABCDEFGHIJ"[Number(d)]);
  const secret = "a-long-shared-secret-for-hmac-signing";
  let production: ApiHandle;
  let driver: Driver;
  let admin: string;
  let department: CreatedTestDepartment;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    receiver = await startReceiver();
    admin = await clientToken(stack.api.url, stack.admin.clientId, stack.admin.clientSecret, "admin");
    department = await createDepartment(stack.api.url, admin, { code: `SEC_${tag}`, name: "Security" });
    production = await stack.startExtraApi(undefined, await productionEnv(stack));
  });
  after(async () => {
    await production?.stop();
    await receiver?.stop();
    await driver?.close();
  });

  describe("H1: webhook targets (SSRF)", function () {
    // Every one of these passed the hand-written deny-list; each is refused by the allow-list (global unicast only).
    const refused: [string, string][] = [
      ["http://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"],
      ["http://[::ffff:169.254.169.254]/latest/meta-data/", "IPv4-mapped cloud metadata"],
      ["http://[::ffff:10.0.0.1]/", "IPv4-mapped private"],
      ["http://[::ffff:10.0.0.5]:8545/", "IPv4-mapped private, a chain port"],
      ["http://[64:ff9b::a9fe:a9fe]/", "NAT64 of the metadata address"],
      ["http://[fe90::1]/", "link-local beyond fe80:"],
      ["http://198.18.0.1/", "benchmarking 198.18/15"],
      ["http://192.0.0.192/", "IETF 192.0.0/24 (old metadata address)"],
      ["http://224.0.0.1/", "multicast"],
      ["http://240.0.0.1/", "reserved 240/4"],
      ["http://[::127.0.0.1]/", "IPv4-compatible loopback (::7f00:1)"],
      ["http://[2002:7f00:1::1]/", "6to4"],
      ["http://[fec0::1]/", "site-local"],
      ["http://[ff02::1]/", "IPv6 multicast"],
      ["http://100.64.0.1/", "carrier-grade NAT"],
      ["http://0.0.0.0/", "unspecified"],
      ["http://[::]/", "IPv6 unspecified"],
      ["http://127.0.0.1/x", "loopback"],
      ["http://localhost/x", "a name for loopback"],
      ["http://10.1.2.3/x", "private"],
      ["http://192.168.1.1/x", "private"],
      ["http://169.254.169.254/latest/meta-data", "link-local metadata"],
      ["http://[::1]/x", "IPv6 loopback"],
      ["http://[fd00::1]/x", "unique local"],
      ["http://[2001:db8::1]/x", "documentation"],
    ];
    for (const [url, what] of refused) {
      it(`refuses ${url} (${what}) at registration, in production, without saying what it resolves to`, async function () {
        const response = await departmentClient(production.url, department).post("/webhooks", { url, events: ["APPROVAL_REQUIRED"], secret });
        expect(response.status, url).to.equal(400);
        expect(response.body.code, url).to.equal("INVALID_WEBHOOK_URL");
        expect(response.body.message).to.not.match(/\d+\.\d+\.\d+\.\d+|::/);
      });
    }

    it("accepts a public unicast address in production", async function () {
      const hooks = departmentClient(production.url, department);
      for (const url of ["https://93.184.216.34/hook", "https://[2606:2800:220:1:248:1893:25c8:1946]/hook"]) {
        const response = await hooks.post("/webhooks", { url, events: ["APPROVAL_REQUIRED"], secret });
        expect(response.status, url).to.equal(201);
        expect((await hooks.delete(`/webhooks/${response.body.webhookId}`)).status).to.equal(204);
      }
    });

    it("answers a test delivery to a refused target with 400 and no status or time, and sends nothing (no port scanner)", async function () {
      // Registered through the development API (loopback is allowed there), tested through the production one.
      const registered = await departmentClient(current().api.url, department).post("/webhooks", { url: `${receiver.url}`, events: ["APPROVAL_REQUIRED"], secret });
      expect(registered.status).to.equal(201);
      const before = receiver.received.length;
      const test = await departmentClient(production.url, department).post(`/webhooks/${registered.body.webhookId}/test`, {});
      expect(test.status).to.equal(400);
      expect(test.body.code).to.equal("INVALID_WEBHOOK_URL");
      expect(test.body).to.not.have.property("statusCode");
      expect(test.body).to.not.have.property("responseTime");
      expect(receiver.received.length).to.equal(before);
      const { rows } = await driver.core.pool.query(`SELECT response_time, response_status, error FROM webhook_logs WHERE webhook_id = $1`, [registered.body.webhookId]);
      expect(rows).to.deep.equal([{ response_time: null, response_status: null, error: "refused: the target is not a public address" }]);
      await departmentClient(current().api.url, department).delete(`/webhooks/${registered.body.webhookId}`);
    });

    it("checks the address the socket connects to: a name that re-binds to loopback after registration is refused at connect time", async function () {
      const port = new URL(receiver.url).port;
      let answer = "93.184.216.34"; // what the name resolves to when it is registered
      const resolve = async () => [{ address: answer, family: 4 }];
      const url = `http://rebinding.example:${port}/rebind`;
      expect((await checkWebhookUrl(url, { production: true, resolve })).hostname).to.equal("rebinding.example");
      answer = "127.0.0.1"; // TTL 0: by delivery time the same name points at the API's host
      const before = receiver.received.length;
      const registered = await departmentClient(current().api.url, department).post("/webhooks", { url: receiver.url, events: ["APPROVAL_REQUIRED"], secret });
      const target = { id: registered.body.webhookId as string, url, secret };
      const event = { eventId: `evt_rebind_${tag}`, eventType: "APPROVAL_REQUIRED", payload: { probe: true } };
      const attempt = await deliver(driver.core.pool, target, event, { production: true, resolve });
      expect(attempt).to.deep.include({ success: false, refused: true, statusCode: null, responseTime: null });
      expect(receiver.received.length).to.equal(before);
      // One public and one internal address: refused too (every address is checked, not the first).
      const mixed = async () => [{ address: "93.184.216.34", family: 4 }, { address: "::ffff:7f00:1", family: 6 }];
      expect((await deliver(driver.core.pool, target, event, { production: true, resolve: mixed })).refused).to.equal(true);
      // The same resolver in development (loopback allowed) reaches the receiver: the socket really used this lookup.
      const delivered = await deliver(driver.core.pool, target, event, { production: false, resolve });
      expect(delivered).to.deep.include({ success: true, refused: false, statusCode: 200 });
      expect(receiver.received.at(-1)!.path).to.equal("/rebind");
    });

    it("classifies addresses with ipaddr.js: IPv4-mapped forms are unwrapped, only global unicast passes in production", function () {
      for (const a of ["::ffff:7f00:1", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "fe90::1", "198.18.0.1", "192.0.0.192", "::7f00:1", "not-an-address"]) {
        expect(isAllowedAddress(a, { production: true }), a).to.equal(false);
      }
      for (const a of ["8.8.8.8", "2001:4860:4860::8888", "::ffff:8.8.8.8"]) expect(isAllowedAddress(a, { production: true }), a).to.equal(true);
      expect(isAllowedAddress("::ffff:127.0.0.1", { production: false })).to.equal(true); // development: local receivers
      expect(isAllowedAddress("10.0.0.1", { production: false })).to.equal(false);
    });
  });
});
