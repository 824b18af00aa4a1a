import { expect } from "chai";
import { id, keccak256 } from "ethers";
import { checkAssertion, decodePasskeySignature } from "../../scripts/audit/passkeyAudit.ts";
import {
  AssertionFormatError,
  accountAssertion,
  derSignature,
  encodePasskeySignature,
} from "../../api/src/domain/passkeys/passkeySignature.ts";
import { authenticationResponse, createSoftwarePasskey } from "../stack/support/softwarePasskey.ts";

const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const digest = id("a decision's digest");
const ceremony = { origin: "http://localhost:8080", rpId: "localhost" };

/** DER SEQUENCE { INTEGER r, INTEGER s } with minimal encodings. */
function der(r: bigint, s: bigint): Buffer {
  const integer = (v: bigint) => {
    let bytes = Buffer.from(v.toString(16).padStart(64, "0"), "hex");
    while (bytes.length > 1 && bytes[0] === 0 && !(bytes[1] & 0x80)) bytes = bytes.subarray(1);
    if (bytes[0] & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([integer(r), integer(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

describe("a browser's passkey assertion in the account's form (accountAssertion)", function () {
  const passkey = createSoftwarePasskey();

  it("is verified by the auditor's off-chain check of the account's rules, whatever s the authenticator chose", function () {
    // Node's ECDSA picks s at random: about half of these are high-s and must come out low.
    for (let i = 0; i < 12; i++) {
      const assertion = accountAssertion(authenticationResponse(passkey, { challenge: digest }, ceremony), digest);
      expect(BigInt(assertion.s) <= P256_N / 2n, "low s").to.equal(true);
      const check = checkAssertion(passkey.publicKey, digest, {
        ...assertion,
        challengeIndex: BigInt(assertion.challengeIndex),
        typeIndex: BigInt(assertion.typeIndex),
      });
      expect(check.problems).to.deep.equal([]);
      expect(check.origin).to.equal(ceremony.origin);
    }
  });

  it("turns a high-s signature into its low-s twin, the one the account accepts", function () {
    const response = authenticationResponse(passkey, { challenge: digest }, ceremony);
    const { r, s } = derSignature(Buffer.from(response.response.signature, "base64url"));
    const high = s > P256_N / 2n ? s : P256_N - s;
    const flipped = {
      ...response,
      response: { ...response.response, signature: der(r, high).toString("base64url") },
    };
    const a = accountAssertion(response, digest);
    expect(accountAssertion(flipped, digest)).to.deep.equal(a);
    expect(BigInt(a.s)).to.equal(P256_N - high);
  });

  it("points challengeIndex and typeIndex at the fields, in bytes", function () {
    const assertion = accountAssertion(authenticationResponse(passkey, { challenge: digest }, ceremony), digest);
    const json = Buffer.from(assertion.clientDataJSON);
    expect(json.subarray(assertion.typeIndex).toString().startsWith('"type":"webauthn.get"')).to.equal(true);
    expect(json.subarray(assertion.challengeIndex).toString()).to.match(/^"challenge":"[A-Za-z0-9_-]{43}"/);
  });

  it("refuses an assertion over another digest, and a signature that is not DER", function () {
    const response = authenticationResponse(passkey, { challenge: digest }, ceremony);
    expect(() => accountAssertion(response, id("another"))).to.throw(AssertionFormatError);
    const broken = { ...response, response: { ...response.response, signature: "AAAA" } };
    expect(() => accountAssertion(broken, digest)).to.throw(AssertionFormatError);
    const trailing = Buffer.concat([Buffer.from(response.response.signature, "base64url"), Buffer.from([0])]);
    expect(() => derSignature(trailing)).to.throw(AssertionFormatError);
    expect(() => derSignature(der(1n, P256_N))).to.throw(AssertionFormatError);
  });
});

describe("the account's signature of several reviewers (encodePasskeySignature)", function () {
  it("sorts the keys by keccak256 and every decoded assertion verifies for its key", function () {
    const passkeys = [createSoftwarePasskey(), createSoftwarePasskey(), createSoftwarePasskey()];
    const approvals = passkeys.map((p) => ({
      key: p.publicKey,
      assertion: accountAssertion(authenticationResponse(p, { challenge: digest }, ceremony), digest),
    }));
    const decoded = decodePasskeySignature(encodePasskeySignature(approvals))!;
    const ids = decoded.keys.map((k) => BigInt(keccak256(k)));
    expect(ids).to.deep.equal([...ids].sort((a, b) => (a < b ? -1 : 1)));
    expect(decoded.keys).to.have.members(passkeys.map((p) => p.publicKey));
    decoded.keys.forEach((key, i) =>
      expect(checkAssertion(key, digest, decoded.assertions[i]).problems).to.deep.equal([]),
    );
  });
});
