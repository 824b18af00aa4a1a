import { expect } from "chai";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import {
  MIN_WHSEC_KEY_BYTES,
  signDelivery,
  standardWebhooksKey,
  whsecProblem,
} from "../../api/src/webhooks/signing.ts";

const body = JSON.stringify({ type: "WEBHOOK_TEST" });
const eventId = "evt_0b6e2d9e-5d9a-4f3e-8d6b-1c2e3f4a5b6c";
const whsec = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString("base64")}`;

describe("webhook secrets of the whsec_ form (api/src/webhooks/signing.ts)", function () {
  it(`accepts canonical base64 of ${MIN_WHSEC_KEY_BYTES} bytes or more, and any secret without the prefix`, function () {
    for (const secret of [whsec(24), whsec(32), whsec(64), "a plain secret of any kind!!"])
      expect(whsecProblem(secret), secret).to.equal(undefined);
  });

  it("refuses what does not decode to a key of 24 bytes or more, naming why", function () {
    const refused: [string, RegExp][] = [
      ["whsec_!!!!!!!!!!!!!!!!", /base64/], // Node's decoder skips every character: an empty key
      ["whsec_", /at least 24 bytes/],
      [whsec(23), /at least 24 bytes/],
      [whsec(24).slice(0, -1), /base64/], // not padded to whole quanta
      [`${whsec(24)} `, /base64/],
      [`whsec_${Buffer.alloc(24, 7).toString("base64url").replace(/A/g, "-")}-`, /base64/], // base64url alphabet
      ["whsec_AAB=AAAA", /base64/], // padding in the middle
      ["whsec_AB==", /base64/], // unused bits set: a second spelling of the key AA==
    ];
    for (const [secret, why] of refused) expect(whsecProblem(secret), secret).to.match(why);
  });

  it("never keys a signature with an empty key: a refused whsec_ secret stored earlier keys with its UTF-8 bytes", function () {
    const forged = "whsec_!!!!!!!!!!!!!!!!";
    expect(standardWebhooksKey(forged)).to.deep.equal(Buffer.from(forged, "utf8"));
    const headers = signDelivery(forged, eventId, body, new Date(1_800_000_000_000));
    const withEmptyKey = createHmac("sha256", Buffer.alloc(0))
      .update(`${eventId}.${headers["webhook-timestamp"]}.${body}`)
      .digest("base64");
    expect(headers["webhook-signature"]).to.not.equal(`v1,${withEmptyKey}`);
  });

  it("a valid whsec_ secret keys with its decoded bytes, as the Standard Webhooks library verifies", function () {
    const secret = whsec(32);
    const headers = signDelivery(secret, eventId, body);
    expect(new Webhook(secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
  });
});
