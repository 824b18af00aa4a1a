/**
 * Passkeys for the contract tests: real P-256 key pairs (node:crypto) and WebAuthn assertions built byte for byte
 * as a browser and an authenticator make them (authenticatorData = rpIdHash ‖ flags ‖ signCount, clientDataJSON
 * with the challenge in base64url, ES256 signature over authenticatorData ‖ sha256(clientDataJSON), low s), and the
 * signature DepartmentPasskeyAccount reads: abi.encode(bytes[] keys, Assertion[] assertions), keys sorted by
 * keccak256.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { AbiCoder, concat, getBytes, hexlify, keccak256, toBeHex, zeroPadValue } from "ethers";

/** The P-256 group order n: a signature's s must be at most n / 2 (P256.verify refuses the high-s twin). */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
export const FLAG_BE = 0x08;
export const FLAG_BS = 0x10;

export interface Passkey {
  /** The public key as the account stores it: 64 bytes qx ‖ qy. */
  key: string;
  privateKey: KeyObject;
}

export interface Assertion {
  r: string;
  s: string;
  challengeIndex: bigint;
  typeIndex: bigint;
  authenticatorData: string;
  clientDataJSON: string;
}

export interface AssertionOptions {
  type?: string;
  origin?: string;
  rpId?: string;
  flags?: number;
  signCount?: number;
  /** Keep the signature's s as the signer produced it, even above n / 2. */
  highS?: boolean;
}

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

/** A new passkey (a P-256 key pair, as an authenticator creates one). */
export function createPasskey(): Passkey {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const jwk = publicKey.export({ format: "jwk" });
  const coordinate = (b64: string | undefined) => hexlify(Buffer.from(b64!, "base64url"));
  return { key: concat([coordinate(jwk.x), coordinate(jwk.y)]), privateKey };
}

/**
 * `passkey`'s assertion over `challenge` (32 bytes hex), as navigator.credentials.get returns it for RP ID
 * "licences.example" and user verification (flags UP | UV by default).
 */
export function assert(passkey: Passkey, challenge: string, options: AssertionOptions = {}): Assertion {
  const rpId = options.rpId ?? "licences.example";
  const flags = options.flags ?? FLAG_UP | FLAG_UV;
  const signCount = Buffer.alloc(4);
  signCount.writeUInt32BE(options.signCount ?? 1);
  const authenticatorData = Buffer.concat([sha256(rpId), Buffer.from([flags]), signCount]);
  // A browser's serialisation: type, challenge, origin, crossOrigin, in this order.
  const clientDataJSON = JSON.stringify({
    type: options.type ?? "webauthn.get",
    challenge: Buffer.from(getBytes(challenge)).toString("base64url"),
    origin: options.origin ?? `https://${rpId}`,
    crossOrigin: false,
  });
  const signed = Buffer.concat([authenticatorData, sha256(clientDataJSON)]);
  const signature = sign("sha256", signed, { key: passkey.privateKey, dsaEncoding: "ieee-p1363" });
  const r = BigInt(hexlify(signature.subarray(0, 32)));
  let s = BigInt(hexlify(signature.subarray(32)));
  if (options.highS ? s <= P256_N / 2n : s > P256_N / 2n) s = P256_N - s;
  return {
    r: zeroPadValue(toBeHex(r), 32),
    s: zeroPadValue(toBeHex(s), 32),
    challengeIndex: BigInt(clientDataJSON.indexOf('"challenge":')),
    typeIndex: BigInt(clientDataJSON.indexOf('"type":')),
    authenticatorData: hexlify(authenticatorData),
    clientDataJSON,
  };
}

const ASSERTION_TUPLE =
  "tuple(bytes32 r,bytes32 s,uint256 challengeIndex,uint256 typeIndex,bytes authenticatorData,string clientDataJSON)";

/** The account's signature from (key, assertion) pairs, given in this order (no sorting, no deduplication). */
export function encodeApprovals(approvals: { key: string; assertion: Assertion }[]): string {
  return AbiCoder.defaultAbiCoder().encode(
    ["bytes[]", `${ASSERTION_TUPLE}[]`],
    [approvals.map((a) => a.key), approvals.map((a) => a.assertion)],
  );
}

/** Sorted as the account requires: by keccak256 of the key, ascending. */
export function byReviewerId<T extends { key: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => (BigInt(keccak256(a.key)) < BigInt(keccak256(b.key)) ? -1 : 1));
}

/** The account's signature of `hash` by `passkeys` (each asserting over it), keys sorted by keccak256. */
export function signWithPasskeys(hash: string, passkeys: Passkey[], options: AssertionOptions = {}): string {
  return encodeApprovals(byReviewerId(passkeys).map((p) => ({ key: p.key, assertion: assert(p, hash, options) })));
}
