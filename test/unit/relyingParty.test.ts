/** The console's WebAuthn relying party, from PUBLIC_BASE_URL (api/src/domain/reviewers/relyingParty.ts). */
import { expect } from "chai";
import { relyingParty } from "../../api/src/domain/reviewers/relyingParty.ts";

describe("console relying party", function () {
  it("is PUBLIC_BASE_URL's host and origin", function () {
    expect(relyingParty({ publicBaseUrl: "https://permits.example.gov/" })).to.include({
      rpID: "permits.example.gov",
      origin: "https://permits.example.gov",
    });
  });

  it("is localhost on a loopback address, which browsers refuse as an RP ID", function () {
    expect(relyingParty({ publicBaseUrl: "http://127.0.0.1:3000" })).to.include({
      rpID: "localhost",
      origin: "http://localhost:3000",
    });
    expect(relyingParty({ publicBaseUrl: "http://[::1]:8080" })).to.include({
      rpID: "localhost",
      origin: "http://localhost:8080",
    });
    expect(relyingParty({ publicBaseUrl: "http://localhost:3000" }).origin).to.equal("http://localhost:3000");
  });
});
