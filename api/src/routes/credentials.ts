/**
 * The licence as a wallet credential: the issuer's DID document, the signed status lists and the SD-JWT VC type
 * metadata (public, at the root, where the credentials point), and the holder's download of a licence's credential.
 */
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import { didDocument, issuerIdentity } from "../domain/credentials/issuerIdentity.ts";
import {
  credentialContext,
  holderCredential,
  LICENCE_VCT_PATH,
  licenceTypeMetadata,
} from "../domain/credentials/licenceCredential.ts";
import { MEDIA_TYPES, signedStatusList, STATUS_LIST_TTL_SECONDS } from "../domain/credentials/statusListCredentials.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { CredentialQuery, DidDocument, LicenceTypeMetadata, StatusListParams } from "./schemas/credential.ts";

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
    route.get("/credentials/status/:list/:kind", "getStatusList", {
      summary: "A signed status list of the licence credentials",
      description: `A licence's lists: number = token id div 131,072, index = token id mod 131,072. \`revocation\` and \`suspension\`: a W3C BitstringStatusListCredential (application/vc+jwt; encodedList = multibase base64url of the GZIP-compressed bitstring, 1 bit per licence). \`token-status\`: an IETF Token Status List (application/statuslist+jwt; 2 bits per licence: 0 valid, 1 revoked, 2 suspended). Built from the index's licence statuses on each request and signed by the DID's key; every list up to the highest in use answers (all zeros when none of its licences is suspended or revoked). Cached for ${STATUS_LIST_TTL_SECONDS} s.`,
      params: StatusListParams,
      responses: {
        200: { description: "The signed list (compact JWS)", contentType: MEDIA_TYPES.vcJwt },
        400: "Not a list number, or an unknown kind",
        404: "Beyond the highest list in use",
      },
      handler: async ({ params }) => {
        const { token, mediaType } = await signedStatusList(context, params.list, params.kind);
        return {
          body: token,
          headers: { "content-type": mediaType, "Cache-Control": `public, max-age=${STATUS_LIST_TTL_SECONDS}` },
        };
      },
    }),
    route.get(LICENCE_VCT_PATH, "getLicenceTypeMetadata", {
      summary: "The SD-JWT VC type of the licence credential (its `vct`): claims and which are disclosable",
      responses: { 200: { description: "SD-JWT VC type metadata", schema: LicenceTypeMetadata } },
      handler: () => ({ body: licenceTypeMetadata(base), headers: { "Cache-Control": "public, max-age=3600" } }),
    }),
  ];
  const api: RouteDefinition[] = [
    route.get("/requests/:requestId/credential", "getLicenceCredential", {
      summary: "The issued licence as a verifiable credential for the holder's wallet (vc+jwt or dc+sd-jwt)",
      description:
        "The applicant (or a client acting for the applicant with applications:read), as for the request's detail. `vc+jwt`: a W3C VC 2.0 document signed as a JWS (typ vc+jwt, kid = the DID's verification method) with the licence number, type, premises and conditions (from the request's metadata, when present), validFrom = issuance, validUntil = the chain's expiry, evidence (the SHA-256 of every anchored document and the approvals that issued the licence, with their digest) and credentialStatus (revocation and suspension Bitstring Status List entries, and the soulbound token as a LicenceTokenStatusEntry); no holder name. `dc+sd-jwt`: an SD-JWT VC with the same content, the licence number, type, holder name, premises and conditions each selectively disclosable, and `status.status_list` pointing at the Token Status List; bound to `holderKey` when given. Only while the licence stands (APPROVED and not expired).",
      access: [{ kind: "applicant" }, { kind: "client", scope: "applications:read" }],
      params: z.object({ requestId: z.uuid() }),
      query: CredentialQuery,
      responses: {
        200: { description: "The compact credential", contentType: "application/vc+jwt" },
        400: "An unknown format, or a holderKey that is not a public JWK (or given for vc+jwt)",
        401: "Not authenticated",
        404: "No such request (or not yours)",
        409: "NOT_ISSUED: the licence was never issued; LICENCE_NOT_VALID: suspended, revoked or expired",
      },
      handler: async ({ params, query, principal }) => ({
        body: await holderCredential(
          credentialContext(context),
          principal,
          params.requestId,
          query.format,
          query.holderKey,
        ),
        headers: { "content-type": `application/${query.format}`, "Cache-Control": "private, no-store" },
      }),
    }),
  ];
  return { api, root };
}
