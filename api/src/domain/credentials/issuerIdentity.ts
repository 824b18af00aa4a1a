/**
 * The credential issuer's identity: a did:web of PUBLIC_BASE_URL, whose DID document (served at
 * /.well-known/did.json) publishes the credential-signing key as a JsonWebKey verification method for assertions.
 */
import type { JsonWebKey } from "node:crypto";
import { CREDENTIAL_KEY_ID } from "../../chain/credentialKey.ts";

/** did:web of an origin: the host, its port percent-encoded (http://localhost:3000 → did:web:localhost%3A3000). */
export function didWebOf(publicBaseUrl: string): string {
  const url = new URL(publicBaseUrl);
  const path = url.pathname.split("/").filter(Boolean).map(encodeURIComponent);
  return ["did:web", encodeURIComponent(url.host), ...path].join(":");
}

export interface IssuerIdentity {
  did: string;
  /** The verification method: `${did}#credential-key-1`, the `kid` of everything the key signs. */
  kid: string;
}

export function issuerIdentity(publicBaseUrl: string): IssuerIdentity {
  const did = didWebOf(publicBaseUrl);
  return { did, kid: `${did}#${CREDENTIAL_KEY_ID}` };
}

export function didDocument({ did, kid }: IssuerIdentity, publicJwk: JsonWebKey) {
  return {
    "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/jwk/v1"],
    id: did,
    verificationMethod: [{ id: kid, type: "JsonWebKey", controller: did, publicKeyJwk: publicJwk }],
    assertionMethod: [kid],
  };
}
