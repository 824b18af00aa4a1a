/**
 * The stack tests' software authenticator answers the ceremonies in a form @simplewebauthn/server accepts, and its
 * variations (another origin or RP ID, no user verification, a counter that went back) are refused as a real
 * relying party would refuse them.
 */
import { expect } from "chai";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import {
  authenticationResponse,
  createSoftwarePasskey,
  FLAG_AT,
  FLAG_UP,
  registrationResponse,
  type SoftwarePasskey,
} from "../stack/support/softwarePasskey.ts";

const origin = "http://localhost:8080";
const rpId = "localhost";

async function registered(passkey: SoftwarePasskey) {
  const options = await generateRegistrationOptions({
    rpName: "Licences",
    rpID: rpId,
    userName: "reviewer",
    attestationType: "none",
    supportedAlgorithmIDs: [-7],
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
  const response = registrationResponse(passkey, options, { origin, rpId });
  return { options, response };
}

describe("software passkey", () => {
  it("registers: the server reads its ES256 key, credential id and user verification", async () => {
    const passkey = createSoftwarePasskey();
    const { options, response } = await registered(passkey);
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: options.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
      supportedAlgorithmIDs: [-7],
    });
    expect(result.verified).to.equal(true);
    expect(result.registrationInfo!.credential.id).to.equal(passkey.id);
    expect(Buffer.from(result.registrationInfo!.credential.publicKey)).to.deep.equal(
      Buffer.from(passkey.cosePublicKey),
    );
    expect(result.registrationInfo!.userVerified).to.equal(true);
    expect(passkey.userHandle).to.equal(options.user.id);
    expect(passkey.publicKey).to.match(/^0x[0-9a-f]{128}$/);
  });

  it("registration for another origin, another RP ID or without user verification is refused", async () => {
    const passkey = createSoftwarePasskey();
    const { options } = await registered(passkey);
    const verify = (response: ReturnType<typeof registrationResponse>) =>
      verifyRegistrationResponse({
        response,
        expectedChallenge: options.challenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        requireUserVerification: true,
      });
    for (const response of [
      registrationResponse(passkey, options, { origin: "https://evil.example", rpId }),
      registrationResponse(passkey, options, { origin, rpId: "evil.example" }),
      registrationResponse(passkey, options, { origin, rpId, flags: FLAG_UP | FLAG_AT }),
    ]) {
      let failed = false;
      await verify(response).catch(() => (failed = true));
      expect(failed).to.equal(true);
    }
  });

  it("signs in: DER signature over authenticator data and client data, counter and user handle", async () => {
    const passkey = createSoftwarePasskey();
    const { response: registration } = await registered(passkey);
    const options = await generateAuthenticationOptions({ rpID: rpId, userVerification: "required" });
    const response = authenticationResponse(passkey, options, { origin, rpId });
    expect(response.response.userHandle).to.equal(passkey.userHandle);
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: options.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
      credential: { id: registration.id, publicKey: passkey.cosePublicKey, counter: 0 },
    });
    expect(result.verified).to.equal(true);
    expect(result.authenticationInfo.newCounter).to.equal(1);
  });

  it("an assertion over a 0x digest carries it as the base64url challenge", async () => {
    const passkey = createSoftwarePasskey();
    await registered(passkey);
    const digest = "0x" + "ab".repeat(32);
    const response = authenticationResponse(passkey, { challenge: digest }, { origin, rpId });
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: Buffer.from("ab".repeat(32), "hex").toString("base64url"),
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
      credential: { id: passkey.id, publicKey: passkey.cosePublicKey, counter: 0 },
    });
    expect(result.verified).to.equal(true);
  });

  it("assertions with a counter that went back, another origin or no user verification are refused", async () => {
    const passkey = createSoftwarePasskey();
    await registered(passkey);
    const options = await generateAuthenticationOptions({ rpID: rpId, userVerification: "required" });
    const verify = (response: ReturnType<typeof authenticationResponse>, counter: number) =>
      verifyAuthenticationResponse({
        response,
        expectedChallenge: options.challenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        requireUserVerification: true,
        credential: { id: passkey.id, publicKey: passkey.cosePublicKey, counter },
      });
    for (const [response, counter] of [
      [authenticationResponse(passkey, options, { origin, rpId, signCount: 3 }), 5],
      [authenticationResponse(passkey, options, { origin: "https://evil.example", rpId }), 0],
      [authenticationResponse(passkey, options, { origin, rpId: "evil.example" }), 0],
      [authenticationResponse(passkey, options, { origin, rpId, flags: FLAG_UP }), 0],
    ] as const) {
      let failed = false;
      await verify(response, counter).catch(() => (failed = true));
      expect(failed).to.equal(true);
    }
  });

  it("refuses to answer a request whose allowed credentials do not include it", () => {
    const passkey = createSoftwarePasskey();
    expect(() =>
      authenticationResponse(passkey, { challenge: "AAAA", allowCredentials: [{ id: "other" }] }, { origin, rpId }),
    ).to.throw(/NotAllowedError/);
  });
});
