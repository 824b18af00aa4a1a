import { expect } from "chai";
import { QrIssuer, payloadFrom, verifyPayload } from "../../api/src/domain/verification/qrPayload.ts";

// Fixed test keys (Hardhat's first two development accounts), so the payload is the same on every run.
const ISSUER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const OTHER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const claim = { chainId: 31337, contract: "0x5FbDB2315678afecb367f032d93F642f64180aa3", tokenId: 42n };

describe("qrPayload (api/src/domain/verification/qrPayload.ts)", function () {
  const issuer = new QrIssuer(ISSUER_KEY);

  it("signs LAP1.<chain>.<contract>.<token>.<signature> that verifies to the claim", async function () {
    const payload = await issuer.sign(claim);
    expect(payload).to.match(/^LAP1\.31337\.5fbdb2315678afecb367f032d93f642f64180aa3\.42\.[A-Za-z0-9_-]{87}$/);
    expect(verifyPayload(payload, issuer.address)).to.deep.equal(claim);
  });

  it("accepts the payload inside a verification-page URL", async function () {
    const payload = await issuer.sign(claim);
    const url = `https://licences.example/verify?qr=${encodeURIComponent(payload)}`;
    expect(payloadFrom(url)).to.equal(payload);
    expect(verifyPayload(`  ${url} `, issuer.address)).to.deep.equal(claim);
  });

  it("refuses another issuer's signature and any edited field", async function () {
    const payload = await issuer.sign(claim);
    expect(verifyPayload(await new QrIssuer(OTHER_KEY).sign(claim), issuer.address)).to.equal(undefined);
    expect(verifyPayload(payload.replace(".42.", ".43."), issuer.address)).to.equal(undefined);
    expect(verifyPayload(payload.replace("LAP1.31337", "LAP1.1"), issuer.address)).to.equal(undefined);
    expect(verifyPayload(payload.slice(0, -2), issuer.address)).to.equal(undefined);
    expect(verifyPayload("not a payload", issuer.address)).to.equal(undefined);
  });
});
