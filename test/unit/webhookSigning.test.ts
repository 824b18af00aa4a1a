import { expect } from "chai";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { signDelivery, standardWebhooksKey } from "../../api/src/webhooks/signing.ts";

const body = JSON.stringify({ type: "request.approved", data: { requestId: "r1" } });
const eventId = "0b6e2d9e-5d9a-4f3e-8d6b-1c2e3f4a5b6c";

describe("webhook signatures (api/src/webhooks/signing.ts)", function () {
  it("X-Webhook-Signature is sha256= the hex HMAC of the exact body under the secret", function () {
    const headers = signDelivery("s3cret", eventId, body, new Date(1_800_000_000_500));
    const expected = createHmac("sha256", "s3cret").update(body).digest("hex");
    expect(headers["X-Webhook-Signature"]).to.equal(`sha256=${expected}`);
    expect(headers["webhook-id"]).to.equal(eventId);
    expect(headers["webhook-timestamp"]).to.equal("1800000000");
  });

  it("verifies with the standardwebhooks library, for a whsec_ secret and a plain one", function () {
    const whsec = `whsec_${Buffer.from("a key of thirty-two bytes!!!!!!!").toString("base64")}`;
    for (const secret of [whsec, "a plain secret"]) {
      const headers = signDelivery(secret, eventId, body);
      const receiver = new Webhook(standardWebhooksKey(secret).toString("base64"));
      expect(receiver.verify(body, headers), secret).to.deep.equal(JSON.parse(body));
      expect(() => receiver.verify(`${body} `, headers), "changed body").to.throw();
    }
  });

  it("the whsec_ form keys with its base64 part, any other secret with its UTF-8 bytes", function () {
    const key = Buffer.from(Array.from({ length: 24 }, (_, i) => i));
    expect(standardWebhooksKey(`whsec_${key.toString("base64")}`)).to.deep.equal(key);
    expect(standardWebhooksKey("plain")).to.deep.equal(Buffer.from("plain", "utf8"));
  });
});
