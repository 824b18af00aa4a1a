/** The 64-byte P-256 key (qx ‖ qy) a DepartmentPasskeyAccount stores, read from a passkey's COSE key. */
import { cose, decodeCredentialPublicKey } from "@simplewebauthn/server/helpers";
import { ES256, passkeyInvalid } from "./relyingParty.ts";

/** 0x qx ‖ qy of an ES256 P-256 COSE key; refuses (400 PASSKEY_INVALID) any other kind of key. */
export function p256KeyOf(cosePublicKey: Uint8Array): string {
  let key: cose.COSEPublicKey;
  try {
    key = decodeCredentialPublicKey(new Uint8Array(cosePublicKey));
  } catch {
    throw passkeyInvalid(400, "The passkey's public key cannot be read");
  }
  if (!cose.isCOSEPublicKeyEC2(key) || key.get(cose.COSEKEYS.alg) !== ES256 || key.get(cose.COSEKEYS.crv) !== 1)
    throw passkeyInvalid(400, "The passkey must use ES256 (ECDSA on P-256): the chain verifies only that");
  const x = key.get(cose.COSEKEYS.x);
  const y = key.get(cose.COSEKEYS.y);
  if (x?.length !== 32 || y?.length !== 32) throw passkeyInvalid(400, "The passkey's P-256 key is malformed");
  return `0x${Buffer.from(x).toString("hex")}${Buffer.from(y).toString("hex")}`;
}
