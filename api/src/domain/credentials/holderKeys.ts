/**
 * The holder key a wallet names by DID in its proof's kid, resolved here from the DID itself (no network): did:jwk
 * (the JWK, base64url JSON) and did:key (multicodec public key, base58btc). P-256 only: proofs are ES256.
 */
import { createPublicKey, ECDH } from "node:crypto";
import { decodeBase58, toBeArray } from "ethers";

export type P256Jwk = { kty: "EC"; crv: "P-256"; x: string; y: string };

/** The varint of multicodec 0x1200 (p256-pub), which prefixes a did:key's compressed point. */
const P256_MULTICODEC = [0x80, 0x24];

export class UnsupportedHolderKey extends Error {}

/** The public JWK a did:jwk or did:key URL names; anything else (another method, curve, a malformed DID) throws. */
export function didKeyToJwk(didUrl: string): P256Jwk {
  const [, method, id, fragment] = /^did:(jwk|key):([^#]+)(?:#(.*))?$/.exec(didUrl) ?? [];
  if (!method) throw new UnsupportedHolderKey("Only did:jwk and did:key name a holder key here");
  // The fragment, when given, must name the DID's one verification method.
  if (fragment !== undefined && fragment !== (method === "jwk" ? "0" : id))
    throw new UnsupportedHolderKey("The kid's fragment names no verification method of its DID");
  return method === "jwk" ? fromDidJwk(id) : fromDidKey(id);
}

function fromDidJwk(id: string): P256Jwk {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(Buffer.from(id, "base64url").toString("utf8"));
  } catch {
    throw new UnsupportedHolderKey("did:jwk does not hold a base64url JSON JWK");
  }
  if (jwk?.kty !== "EC" || jwk.crv !== "P-256" || "d" in jwk)
    throw new UnsupportedHolderKey("did:jwk must hold a public P-256 key");
  return onCurve({ kty: "EC", crv: "P-256", x: String(jwk.x), y: String(jwk.y) });
}

function fromDidKey(id: string): P256Jwk {
  let bytes: Uint8Array;
  try {
    if (!id.startsWith("z")) throw new Error();
    // A P-256 did:key starts 0x80, so base58's leading-zero digits never matter here.
    bytes = toBeArray(decodeBase58(id.slice(1)));
  } catch {
    throw new UnsupportedHolderKey("did:key must be base58btc multibase (z…)");
  }
  if (bytes.length !== 35 || bytes[0] !== P256_MULTICODEC[0] || bytes[1] !== P256_MULTICODEC[1])
    throw new UnsupportedHolderKey("did:key must name a P-256 key (multicodec 0x1200, compressed point)");
  let point: Buffer;
  try {
    point = ECDH.convertKey(bytes.subarray(2), "prime256v1", undefined, undefined, "uncompressed") as Buffer;
  } catch {
    throw new UnsupportedHolderKey("did:key holds no P-256 point");
  }
  const coordinate = (from: number) => point.subarray(from, from + 32).toString("base64url");
  return { kty: "EC", crv: "P-256", x: coordinate(1), y: coordinate(33) };
}

function onCurve(jwk: P256Jwk): P256Jwk {
  try {
    createPublicKey({ key: jwk, format: "jwk" });
  } catch {
    throw new UnsupportedHolderKey("did:jwk holds no P-256 point");
  }
  return jwk;
}
