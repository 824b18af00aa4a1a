/**
 * The licence as a wallet credential: the issuer's DID document (public, at the root).
 */
import type { DomainContext } from "../domain/context.ts";
import { didDocument, issuerIdentity } from "../domain/credentials/issuerIdentity.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { DidDocument } from "./schemas/credential.ts";

const route = routeGroup({ tags: ["Credentials"], access: [{ kind: "public" }] });

export function credentialRoutes(context: DomainContext): { api: RouteDefinition[]; root: RouteDefinition[] } {
  const base = context.config.publicBaseUrl!;
  const root: RouteDefinition[] = [
    route.get("/.well-known/did.json", "getIssuerDid", {
      summary: "The credential issuer's DID document (did:web of this service)",
      description:
        "did:web of PUBLIC_BASE_URL (http://localhost:3000 is did:web:localhost%3A3000). One JsonWebKey verification method, `<did>#credential-key-1` (ES256, P-256), for assertions: it signs every licence credential (vc+jwt, dc+sd-jwt) and every status list. The key is generated once and kept sealed in the key vault.",
      responses: { 200: { description: "DID document", schema: DidDocument } },
      handler: () => ({
        body: didDocument(issuerIdentity(base), context.credentialSigner.publicJwk),
        headers: { "Cache-Control": "public, max-age=300" },
      }),
    }),
  ];
  const api: RouteDefinition[] = [];
  return { api, root };
}
