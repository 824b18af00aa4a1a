import { generateKeyPairSync } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { expect } from "chai";
import { compactVerify, importJWK } from "jose";
import { ES256 } from "@sd-jwt/crypto-nodejs";
import { StatusList } from "@sd-jwt/jwt-status-list";
import { credentialSigner } from "../../api/src/chain/credentialKey.ts";
import { didDocument, didWebOf, issuerIdentity } from "../../api/src/domain/credentials/issuerIdentity.ts";
import {
  evidenceOf,
  holderPublicKey,
  vcDocument,
  type CredentialContext,
  type LicenceClaims,
} from "../../api/src/domain/credentials/licenceCredential.ts";
import { encodedList, tokenStatusLst } from "../../api/src/domain/credentials/statusListCredentials.ts";
import { buildStatusLists, STATUS_LIST_SIZE } from "../../api/src/domain/credentials/statusLists.ts";

const decisions = [
  {
    department: "FIRE",
    stage: 1,
    decision: "APPROVED",
    signer: "0x00000000000000000000000000000000000000aa",
    time: "2026-11-01T10:00:00.000Z",
    transactionHash: "0x" + "ab".repeat(32),
  },
];

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

  describe("status list encodings", function () {
    const bits = buildStatusLists(0, [
      { tokenId: 5n, status: "REVOKED" },
      { tokenId: 130_000n, status: "SUSPENDED" },
    ]);

    it("W3C encodedList: 'u' + base64url of GZIP, decoding to 131,072 bits with index 0 the left-most", function () {
      const encoded = encodedList(bits.revocation);
      expect(encoded).to.match(/^u[A-Za-z0-9_-]+$/);
      const decoded = gunzipSync(Buffer.from(encoded.slice(1), "base64url"));
      expect(decoded.length * 8).to.equal(STATUS_LIST_SIZE);
      expect((decoded[0] >> (7 - 5)) & 1).to.equal(1);
      expect(decoded.filter((byte) => byte !== 0)).to.have.length(1);
    });

    it("IETF lst: what the @sd-jwt status list library inflates to 131,072 two-bit statuses", function () {
      const list = StatusList.decompressStatusList(tokenStatusLst(bits.tokenStatus), 2);
      expect(list.statusList).to.have.length(STATUS_LIST_SIZE);
      expect(list.getStatus(5)).to.equal(1);
      expect(list.getStatus(130_000)).to.equal(2);
      expect(list.getStatus(6)).to.equal(0);
    });
  });

  describe("content", function () {
    const context = {
      publicBaseUrl: "https://licences.example",
      chainId: 31337,
      licenceToken: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    } as CredentialContext;
    const claims: LicenceClaims = {
      licenceNumber: "RL-2026-000001",
      licenceType: "RESORT_LICENSE",
      holderName: "Hana Holder",
      validFrom: new Date("2026-11-01T10:00:00Z"),
      tokenId: 131_073n,
      evidence: evidenceOf({ documents: [], decisions }),
    };

    it("vc+jwt: status entries at the token's list and index, the token on chain, no holder name, no validUntil without expiry", function () {
      const vc = vcDocument(context, issuerIdentity(context.publicBaseUrl), claims);
      expect(vc).to.not.have.property("validUntil");
      expect(JSON.stringify(vc)).to.not.include("Hana");
      expect(vc.credentialStatus[0]).to.include({
        statusListIndex: "1",
        statusListCredential: "https://licences.example/credentials/status/1/revocation",
      });
      expect(vc.credentialStatus[1]).to.include({ statusPurpose: "suspension", statusListIndex: "1" });
      expect(vc.credentialStatus[2]).to.include({
        id: "eip155:31337/erc721:0x5FbDB2315678afecb367f032d93F642f64180aa3/131073",
        tokenId: "131073",
      });
    });

    it("the decisions' digest covers every field and not the key order", function () {
      const { decisionsDigest } = claims.evidence;
      const reordered = decisions.map((d) => Object.fromEntries(Object.entries(d).reverse())) as typeof decisions;
      expect(evidenceOf({ documents: [], decisions: reordered }).decisionsDigest).to.equal(decisionsDigest);
      for (const field of Object.keys(decisions[0]) as (keyof (typeof decisions)[0])[]) {
        const changed = [{ ...decisions[0], [field]: field === "stage" ? 2 : "x" }];
        expect(evidenceOf({ documents: [], decisions: changed }).decisionsDigest, field).to.not.equal(decisionsDigest);
      }
    });

    it("a holder key must be a public JWK in base64url", function () {
      const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
      const jwk = publicKey.export({ format: "jwk" });
      expect(holderPublicKey(encode(jwk))).to.deep.equal(jwk);
      expect(() => holderPublicKey(encode(privateKey.export({ format: "jwk" })))).to.throw(/public key/);
      expect(() => holderPublicKey(encode({ kty: "oct", k: "AAAA" }))).to.throw(/public JWK/);
      expect(() => holderPublicKey("not-json")).to.throw(/public JWK/);
    });
  });
});
