import { expect } from "chai";
import { createHash } from "node:crypto";
import { stableUuid } from "../../api/src/reads/stableId.ts";

describe("stableUuid (api/src/reads/stableId.ts)", function () {
  it("gives the same UUID for the same name and different ones for different names", function () {
    expect(stableUuid("0xabc-1")).to.equal(stableUuid("0xabc-1"));
    expect(stableUuid("0xabc-1")).to.not.equal(stableUuid("0xabc-2"));
  });

  it("is an RFC 4122 version-5-layout UUID built from the name's SHA-256", function () {
    const id = stableUuid("0xabc-1");
    expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const digest = createHash("sha256").update("0xabc-1").digest("hex");
    const hex = id.replace(/-/g, "");
    // every digit but the version nibble and the variant bits comes from the digest
    expect(hex.slice(0, 12)).to.equal(digest.slice(0, 12));
    expect(hex.slice(13, 16)).to.equal(digest.slice(13, 16));
    expect(hex.slice(17, 32)).to.equal(digest.slice(17, 32));
  });
});
