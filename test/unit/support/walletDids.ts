/** The DIDs a wallet names its key by in a proof's kid: did:jwk, and did:key (multicodec key, base58btc). */
import { ECDH } from "node:crypto";
import { encodeBase58 } from "ethers";

type PublicJwk = { x?: string; y?: string };

export const didJwk = (jwk: object) => `did:jwk:${Buffer.from(JSON.stringify(jwk)).toString("base64url")}`;

const didKey = (multicodec: number[], key: Uint8Array) =>
  `did:key:z${encodeBase58(Uint8Array.from([...multicodec, ...key]))}`;

/** P-256: multicodec 0x1200 (varint 0x80 0x24), compressed point: did:key:zDn… */
export function p256DidKey({ x, y }: PublicJwk): string {
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(x!, "base64url"), Buffer.from(y!, "base64url")]);
  return didKey([0x80, 0x24], ECDH.convertKey(point, "prime256v1", undefined, undefined, "compressed") as Buffer);
}

/** Ed25519: multicodec 0xed (varint 0xed 0x01): did:key:z6Mk… */
export const ed25519DidKey = ({ x }: PublicJwk) => didKey([0xed, 0x01], Buffer.from(x!, "base64url"));
