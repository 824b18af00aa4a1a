/**
 * Secrets the API needs back are sealed at rest by the key vault through chain/secretSealer.ts. The rows already
 * stored were sealed before that module existed: the format must not change, so a secret sealed now opens with
 * the vault exactly as before (its UTF-8 bytes, bound to `<purpose>:<owner id>`), and with no other binding.
 */
import { expect } from "chai";
import { secretSealer } from "../../api/src/chain/secretSealer.ts";
import { clientToken } from "./support/authClient.ts";
import { createDepartment, departmentClient } from "./support/departmentClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { current } from "./support/stackFixture.ts";
import { startReceiver } from "./support/webhookReceiver.ts";
import { letters } from "./support/sessions.ts";

/** How the vault's sealed secrets were opened before chain/secretSealer.ts: hex of the UTF-8 bytes. */
const openAsBefore = (driver: Driver, sealed: Buffer, aad: string) =>
  Buffer.from(driver.core.vault.open(sealed, aad).slice(2), "hex").toString("utf8");

describe("sealed secrets at rest (chain/secretSealer.ts, real stack)", function () {
  const tag = letters(String(Date.now() % 1e8));
  let driver: Driver;
  let admin: string;

  before(async function () {
    driver = await createDriver(current());
    admin = await clientToken(current().api.url, current().admin.clientId, current().admin.clientSecret, "admin");
  });
  after(async () => driver?.close());

  it("stores a department's API secret as the vault sealed it before, bound to its code", async function () {
    const code = `SEALED_${tag}`;
    const created = await createDepartment(current().api.url, admin, { code, name: "Sealed" });
    const { rows } = await driver.core.pool.query(`SELECT api_secret_sealed FROM departments WHERE code = $1`, [code]);
    const sealed: Buffer = rows[0].api_secret_sealed;

    expect(openAsBefore(driver, sealed, `department-api-secret:${code}`)).to.equal(created.apiSecret);
    expect(() => openAsBefore(driver, sealed, `department-api-secret:OTHER_${tag}`)).to.throw();
    expect(() => openAsBefore(driver, sealed, `webhook-secret:${code}`)).to.throw();
    // And what was sealed the old way opens through the sealer.
    const before = driver.core.vault.seal(
      Buffer.from("lds_old", "utf8").toString("hex"),
      `department-api-secret:${code}`,
    );
    expect(secretSealer(driver.core.vault, "department-api-secret").open(code, before)).to.equal("lds_old");
  });

  it("stores a webhook's secret as the vault sealed it before, bound to the webhook id", async function () {
    const receiver = await startReceiver();
    try {
      const api = current().api.url;
      const department = departmentClient(
        api,
        await createDepartment(api, admin, { code: `SEALHOOK_${tag}`, name: "Hooks" }),
      );
      const secret = "a-long-shared-secret-sealed-at-rest";
      const response = await department.post("/webhooks", { url: receiver.url, events: ["APPROVAL_REQUIRED"], secret });
      expect(response.status).to.equal(201);
      const id: string = response.body.webhookId;
      const { rows } = await driver.core.pool.query(`SELECT secret_sealed FROM webhooks WHERE id = $1`, [id]);
      const sealed: Buffer = rows[0].secret_sealed;

      expect(sealed.toString("latin1")).not.to.include(secret);
      expect(openAsBefore(driver, sealed, `webhook-secret:${id}`)).to.equal(secret);
      expect(() => openAsBefore(driver, sealed, `department-api-secret:${id}`)).to.throw();
      expect(secretSealer(driver.core.vault, "webhook-secret").open(id, sealed)).to.equal(secret);
    } finally {
      await receiver.stop();
    }
  });
});
