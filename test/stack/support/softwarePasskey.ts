/**
 * A software authenticator for the stack tests: a P-256 key pair (node:crypto) and a random credential id, answering
 * the WebAuthn ceremonies with exactly what a browser hands the page's script (RegistrationResponseJSON and
 * AuthenticationResponseJSON): attestation "none", authenticator data with the attested credential and its COSE EC2
 * key, ES256 signatures in DER. Options let a test lie about the origin, the RP ID, the flags or the counter.
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
export const FLAG_BE = 0x08;
export const FLAG_BS = 0x10;
export const FLAG_AT = 0x40;

export interface SoftwarePasskey {
  /** The credential id, base64url (the id the relying party stores). */
  id: string;
  privateKey: KeyObject;
  /** 0x qx ‖ qy (64 bytes): the key a DepartmentPasskeyAccount stores. */
  publicKey: string;
  /** The COSE EC2 key (kty 2, alg -7, crv 1) the authenticator reports at registration. */
  cosePublicKey: Uint8Array<ArrayBuffer>;
  /** The user handle (base64url) the registration options gave; answered with every assertion. */
  userHandle?: string;
  /** The last counter sent; `authenticationResponse` sends the next one unless told otherwise. */
  signCount: number;
}

export interface CeremonyOptions {
  origin: string;
  rpId: string;
  /** Authenticator data flags; registration defaults to UP | UV | AT, assertions to UP | UV. */
  flags?: number;
  signCount?: number;
  /** clientDataJSON's type (webauthn.create / webauthn.get by default). */
  type?: string;
}

/** What an assertion needs from the request options: the challenge (base64url, or 0x hex) and allowed credentials. */
export type AssertionRequest =
  PublicKeyCredentialRequestOptionsJSON | { challenge: string; allowCredentials?: { id: string }[] };

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
const b64url = (data: Uint8Array | string) => Buffer.from(data).toString("base64url");
const challengeText = (challenge: string) =>
  challenge.startsWith("0x") ? b64url(Buffer.from(challenge.slice(2), "hex")) : challenge;

export function createSoftwarePasskey(): SoftwarePasskey {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const jwk = publicKey.export({ format: "jwk" });
  const x = Buffer.from(jwk.x!, "base64url");
  const y = Buffer.from(jwk.y!, "base64url");
  const cose = new Map<number, number | Uint8Array>([
    [1, 2], // kty: EC2
    [3, -7], // alg: ES256
    [-1, 1], // crv: P-256
    [-2, new Uint8Array(x)],
    [-3, new Uint8Array(y)],
  ]);
  return {
    id: b64url(randomBytes(32)),
    privateKey,
    publicKey: `0x${x.toString("hex")}${y.toString("hex")}`,
    cosePublicKey: new Uint8Array(isoCBOR.encode(cose)),
    signCount: 0,
  };
}

function clientData(type: string, challenge: string, origin: string): string {
  // A browser's serialisation: type, challenge, origin, crossOrigin, in this order.
  return JSON.stringify({ type, challenge: challengeText(challenge), origin, crossOrigin: false });
}

function counterBytes(count: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(count);
  return bytes;
}

/** navigator.credentials.create's answer to `options` (records the user handle on `passkey`). */
export function registrationResponse(
  passkey: SoftwarePasskey,
  options: PublicKeyCredentialCreationOptionsJSON | { challenge: string; user?: { id: string } },
  ceremony: CeremonyOptions,
): RegistrationResponseJSON {
  const credentialId = Buffer.from(passkey.id, "base64url");
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credentialId.length);
  const signCount = ceremony.signCount ?? 0;
  passkey.signCount = signCount;
  const authenticatorData = Buffer.concat([
    sha256(ceremony.rpId),
    Buffer.from([ceremony.flags ?? FLAG_UP | FLAG_UV | FLAG_AT]),
    counterBytes(signCount),
    Buffer.alloc(16), // AAGUID: none, as a privacy-preserving platform authenticator reports it
    idLength,
    credentialId,
    Buffer.from(passkey.cosePublicKey),
  ]);
  const attestationObject = isoCBOR.encode(
    new Map<string, string | Uint8Array | Map<string, string>>([
      ["fmt", "none"],
      ["attStmt", new Map<string, string>()],
      ["authData", new Uint8Array(authenticatorData)],
    ]),
  );
  if (options.user?.id) passkey.userHandle = options.user.id;
  const spki = createPublicKey(passkey.privateKey).export({ type: "spki", format: "der" });
  return {
    id: passkey.id,
    rawId: passkey.id,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: { credProps: { rk: true } },
    response: {
      clientDataJSON: b64url(clientData(ceremony.type ?? "webauthn.create", options.challenge, ceremony.origin)),
      attestationObject: b64url(attestationObject),
      authenticatorData: b64url(authenticatorData),
      transports: ["internal"],
      publicKeyAlgorithm: -7,
      publicKey: b64url(spki),
    },
  };
}

/**
 * navigator.credentials.get's answer to `request`. Throws, as a browser would find no credential, when the request
 * allows credentials and this passkey is not one of them.
 */
export function authenticationResponse(
  passkey: SoftwarePasskey,
  request: AssertionRequest,
  ceremony: CeremonyOptions,
): AuthenticationResponseJSON {
  const allowed = request.allowCredentials;
  if (allowed && allowed.length > 0 && !allowed.some((c) => c.id === passkey.id)) {
    throw new Error("NotAllowedError: this passkey is not among the allowed credentials");
  }
  const signCount = ceremony.signCount ?? passkey.signCount + 1;
  passkey.signCount = signCount;
  const authenticatorData = Buffer.concat([
    sha256(ceremony.rpId),
    Buffer.from([ceremony.flags ?? FLAG_UP | FLAG_UV]),
    counterBytes(signCount),
  ]);
  const clientDataJSON = clientData(ceremony.type ?? "webauthn.get", request.challenge, ceremony.origin);
  const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), {
    key: passkey.privateKey,
    dsaEncoding: "der",
  });
  return {
    id: passkey.id,
    rawId: passkey.id,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64url(clientDataJSON),
      authenticatorData: b64url(authenticatorData),
      signature: b64url(signature),
      ...(passkey.userHandle ? { userHandle: passkey.userHandle } : {}),
    },
  };
}
