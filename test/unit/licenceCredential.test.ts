import { generateKeyPairSync } from "node:crypto";
import { expect } from "chai";
import { compactVerify, importJWK } from "jose";
import { ES256 } from "@sd-jwt/crypto-nodejs";
import { credentialSigner } from "../../api/src/chain/credentialKey.ts";
import { didDocument, didWebOf, issuerIdentity } from "../../api/src/domain/credentials/issuerIdentity.ts";

describe("licence credential (api/src/domain/credentials/)", function () {
  describe("didWebOf", function () {
    it("encodes the port and turns path segments into colons, as did:web specifies", function () {
      expect(didWebOf("http://localhost:3000")).to.equal("did:web:localhost%3A3000");
      expect(didWebOf("https://licences.example")).to.equal("did:web:licences.example");
      expect(didWebOf("https://example.org/gov/licences")).to.equal("did:web:example.org:gov:licences");
    });
  });

  describe("the credential key", function () {
    const signer = credentialSigner(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey);

    it("signs a JWS that jose verifies with the DID document's key alone, and exposes no private part", async function () {
      const identity = issuerIdentity("http://localhost:3000");
      const document = didDocument(identity, signer.publicJwk);
      const jwk = document.verificationMethod[0].publicKeyJwk;
      expect(jwk).to.have.keys("kty", "crv", "x", "y");
      const jws = await signer.signJws({ typ: "vc+jwt", kid: identity.kid }, new TextEncoder().encode("{}"));
      const { protectedHeader } = await compactVerify(jws, await importJWK(jwk as never, "ES256"));
      expect(protectedHeader).to.deep.equal({
        typ: "vc+jwt",
        kid: "did:web:localhost%3A3000#credential-key-1",
        alg: "ES256",
      });
      expect(JSON.stringify(signer)).to.equal('"[CredentialSigner]"');
    });

    it("gives SD-JWT the raw r‖s signature its ES256 verifier checks", async function () {
      const verify = await ES256.getVerifier(signer.publicJwk);
      expect(await verify("header.payload", await signer.sign("header.payload"))).to.equal(true);
      expect(await verify("header.payloaD", await signer.sign("header.payload"))).to.equal(false);
    });
  });
});
