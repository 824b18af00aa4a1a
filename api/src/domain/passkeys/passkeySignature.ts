/**
 * A passkey's WebAuthn assertion as a DepartmentPasskeyAccount reads it (WebAuthnAssertion.Assertion: r, low s,
 * where "challenge" and "type" start in clientDataJSON, authenticatorData, clientDataJSON byte for byte), made from
 * what the browser hands the console (AuthenticationResponseJSON), and the account's signature made of several:
 * abi.encode(bytes[] keys, Assertion[] assertions), keys ascending by keccak256(key), as the account requires.
 */
import { AbiCoder, hexlify, keccak256, toBeHex, zeroPadValue } from "ethers";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";

/** The P-256 group order n: the account refuses an s above n / 2 (the malleable twin of a valid signature). */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const ASSERTION_TUPLE =
  "tuple(bytes32 r,bytes32 s,uint256 challengeIndex,uint256 typeIndex,bytes authenticatorData,string clientDataJSON)";

/** WebAuthnAssertion.Assertion, as JSON can hold it (indexes as decimal numbers). */
export interface AccountAssertion {
  r: string;
  s: string;
  challengeIndex: number;
  typeIndex: number;
  authenticatorData: string;
  clientDataJSON: string;
}

/** An assertion that cannot be made into the account's form (not a DER ECDSA signature, fields missing). */
export class AssertionFormatError extends Error {}

/**
 * The account's form of `response`, an assertion over `digest` (32 bytes, 0x hex). The indexes point at the
 * exact `"type":"webauthn.get"` and `"challenge":"<base64url digest>"` the account compares, counted in bytes of
 * clientDataJSON's UTF-8 (as the account counts); the caller has verified the assertion itself.
 */
export function accountAssertion(response: AuthenticationResponseJSON, digest: string): AccountAssertion {
  const clientData = Buffer.from(response.response.clientDataJSON, "base64url");
  const challenge = Buffer.from(digest.slice(2), "hex").toString("base64url");
  const typeIndex = clientData.indexOf('"type":"webauthn.get"');
  const challengeIndex = clientData.indexOf(`"challenge":"${challenge}"`);
  if (typeIndex < 0 || challengeIndex < 0)
    throw new AssertionFormatError("clientDataJSON does not hold the type and challenge the account checks");
  const { r, s } = derSignature(Buffer.from(response.response.signature, "base64url"));
  return {
    r: zeroPadValue(toBeHex(r), 32),
    s: zeroPadValue(toBeHex(s > P256_N / 2n ? P256_N - s : s), 32),
    challengeIndex,
    typeIndex,
    authenticatorData: hexlify(Buffer.from(response.response.authenticatorData, "base64url")),
    clientDataJSON: clientData.toString("utf8"),
  };
}

/**
 * (r, s) of an ES256 signature as WebAuthn gives it: DER `SEQUENCE { INTEGER r, INTEGER s }`, each at most 32
 * bytes after its sign byte. Anything else (trailing bytes, long lengths, zero or out-of-range values) is refused.
 */
export function derSignature(der: Uint8Array): { r: bigint; s: bigint } {
  const fail = (why: string) => new AssertionFormatError(`the signature is not a DER ECDSA signature: ${why}`);
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) throw fail("not one short SEQUENCE");
  let at = 2;
  const integer = () => {
    if (der[at] !== 0x02) throw fail("an INTEGER is expected");
    const length = der[at + 1];
    if (length === undefined || length < 1 || length > 33 || at + 2 + length > der.length) throw fail("bad length");
    const value = BigInt(hexlify(der.subarray(at + 2, at + 2 + length)));
    at += 2 + length;
    if (value === 0n || value >= P256_N) throw fail("a value outside 1..n-1");
    return value;
  };
  const r = integer();
  const s = integer();
  if (at !== der.length) throw fail("trailing bytes");
  return { r, s };
}

/** The account's signature from each reviewer's key (0x, 64 bytes) and assertion: keys ascending by keccak256. */
export function encodePasskeySignature(approvals: { key: string; assertion: AccountAssertion }[]): string {
  const sorted = [...approvals].sort((a, b) => {
    const [x, y] = [BigInt(keccak256(a.key)), BigInt(keccak256(b.key))];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return AbiCoder.defaultAbiCoder().encode(
    ["bytes[]", `${ASSERTION_TUPLE}[]`],
    [
      sorted.map((a) => a.key),
      sorted.map(({ assertion: a }) => [
        a.r,
        a.s,
        a.challengeIndex,
        a.typeIndex,
        a.authenticatorData,
        a.clientDataJSON,
      ]),
    ],
  );
}
