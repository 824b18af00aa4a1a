import { expect } from "chai";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { didKeyToJwk, UnsupportedHolderKey } from "../../api/src/domain/credentials/holderKeys.ts";
import { didJwk, ed25519DidKey, p256DidKey } from "./support/walletDids.ts";

const p256 = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });

describe("holder keys named by DID", () => {
  it("resolves a did:jwk of a P-256 key, with or without its #0 fragment", () => {
    const jwk = p256();
    expect(didKeyToJwk(`${didJwk(jwk)}#0`)).to.deep.equal(jwk);
    expect(didKeyToJwk(didJwk({ ...jwk, use: "sig" }))).to.deep.equal(jwk);
  });

  it("resolves a did:key of a P-256 key (compressed point) to its JWK, the fragment being the key itself", () => {
    const jwk = p256();
    const did = p256DidKey(jwk);
    expect(did).to.match(/^did:key:zDn/);
    expect(didKeyToJwk(`${did}#${did.slice("did:key:".length)}`)).to.deep.equal(jwk);
    expect(didKeyToJwk(did)).to.deep.equal(jwk);
  });

  it("matches the did:key specification's P-256 test vector", () => {
    expect(didKeyToJwk("did:key:zDnaerx9CtbPJ1q36T5Ln5wYt3MQYeGRG5ehnPAmxcf5mDZpv")).to.deep.equal({
      kty: "EC",
      crv: "P-256",
      x: "igrFmi0whuihKnj9R3Om1SoMph72wUGeFaBbzG2vzns",
      y: "efsX5b10x8yjyrj4ny3pGfLcY7Xby1KzgqOdqnsrJIM",
    });
  });

  it("refuses other curves: an Ed25519 did:key (z6Mk…), a P-384 or Ed25519 did:jwk", () => {
    const ed25519 = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
    expect(ed25519DidKey(ed25519)).to.match(/^did:key:z6Mk/);
    expect(() => didKeyToJwk(ed25519DidKey(ed25519))).to.throw(UnsupportedHolderKey, /P-256/);
    expect(() => didKeyToJwk(didJwk(ed25519))).to.throw(UnsupportedHolderKey, /P-256/);
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ format: "jwk" });
    expect(() => didKeyToJwk(didJwk(p384))).to.throw(UnsupportedHolderKey, /P-256/);
  });

  it("refuses other methods, a private key, a point off the curve, a wrong fragment and garbage", () => {
    const jwk = p256();
    const did = p256DidKey(jwk);
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const offCurve = { ...jwk, y: createPublicKey(privateKey).export({ format: "jwk" }).x };
    for (const bad of [
      "did:web:wallet.example#key-1",
      "did:example:123",
      "not a did",
      didJwk(privateKey.export({ format: "jwk" })),
      didJwk(offCurve),
      `${didJwk(jwk)}#1`,
      `${did}#key-1`,
      "did:jwk:not-json",
      "did:key:zzzz",
      "did:key:z0OIl",
      `did:key:${did.slice("did:key:z".length)}`,
      did.slice(0, -4),
    ])
      expect(() => didKeyToJwk(bad), bad).to.throw(UnsupportedHolderKey);
  });
});
