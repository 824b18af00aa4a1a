/**
 * OpenID for Verifiable Credential Issuance 1.0 (pre-authorized code flow): the metadata documents and the
 * wallet's endpoints at the root (PUBLIC_BASE_URL is the credential issuer and its own authorization server), and
 * the applicant's offer under /api/v1. Wallet-facing errors are `{error, error_description}` as the specs name them.
 */
import type { FailedCredentials } from "../http/rateLimit.ts";
import { Oauth2ServerErrorResponseError } from "@openid4vc/oauth2";
import type { Context } from "koa";
import { z } from "zod/v4";
import { lenientBody, NO_STORE, OAuthErrorSchema } from "../auth/oauthErrors.ts";
import type { DomainContext } from "../domain/context.ts";
import {
  ACCESS_TOKEN_TTL_SECONDS,
  CREDENTIAL_CONFIGURATIONS,
  HOLDER_MISMATCH,
  holderCredentialOffer,
  NONCE_TTL_SECONDS,
  OFFER_TTL_SECONDS,
  oid4vci,
  OID4VCI_PATHS,
} from "../domain/credentials/credentialOffers.ts";
import { credentialContext } from "../domain/credentials/licenceCredential.ts";
import { AppError } from "../domain/errors.ts";
import { routeGroup, type HandlerResult, type RouteDefinition } from "../http/routeTable.ts";
import {
  AccessTokenResponse,
  AuthorizationServerMetadata,
  CredentialIssuerMetadata,
  CredentialOffer,
  CredentialOfferObject,
  CredentialResponse,
  HolderProofInput,
  HolderTokenParams,
  NonceResponse,
  Oid4vciError,
  PreAuthorizedCodeParams,
} from "./schemas/credential.ts";

const route = routeGroup({ tags: ["Credentials"], access: [{ kind: "public" }] });

const TokenRequest = lenientBody("Oid4vciTokenRequest", "Pre-authorized code token request (form)", {
  grant_type: {
    description: "The pre-authorized code grant",
    required: true,
    enum: ["urn:ietf:params:oauth:grant-type:pre-authorized_code"],
  },
  "pre-authorized_code": { description: "The offer's pre-authorized code", required: true },
});

const CredentialRequest = z
  .looseObject({
    credential_configuration_id: z.enum(Object.keys(CREDENTIAL_CONFIGURATIONS) as [string, ...string[]]),
    proofs: z.object({ jwt: z.array(z.string()).length(1).describe("One openid4vci-proof+jwt") }),
  })
  .catch(undefined as never)
  .meta({ id: "CredentialRequest", description: "OID4VCI 1.0 credential request (checked by the handler)" });

/** A wallet-facing answer: the library's error response with its status, never cached. */
async function answered(run: () => Promise<unknown>): Promise<HandlerResult> {
  try {
    return { body: await run(), headers: NO_STORE };
  } catch (error) {
    if (!(error instanceof Oauth2ServerErrorResponseError)) throw error;
    const { error: code, error_description: description = "" } = error.errorResponse;
    // A header value is visible ASCII: no quote (it delimits the description), no newline or other character.
    const challenge: Record<string, string> =
      error.status === 401
        ? { "WWW-Authenticate": `Bearer error="${code}", error_description="${description.replace(/[^ !#-~]/g, " ")}"` }
        : {};
    return { status: error.status, body: error.errorResponse, headers: { ...NO_STORE, ...challenge } };
  }
}

/** The request as the library reads it (method, URL, headers; DPoP and client attestation are not used). */
function requestLike(ctx: Context) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) if (typeof value === "string") headers.set(name, value);
  return { method: "POST" as const, url: ctx.href, headers };
}

export function oid4vciRoutes(
  context: DomainContext,
  failures?: FailedCredentials,
): { api: RouteDefinition[]; root: RouteDefinition[] } {
  // Made on first use: the OpenAPI document declares these routes over an inert context.
  let made: ReturnType<typeof oid4vci> | undefined;
  const issuance = () => (made ??= oid4vci(credentialContext(context)));
  const bodyOf = (ctx: Context) => ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>;
  const root: RouteDefinition[] = [
    route.get("/.well-known/openid-credential-issuer", "getCredentialIssuerMetadata", {
      summary: "OID4VCI credential issuer metadata",
      description: `credential_issuer = PUBLIC_BASE_URL (also the authorization server). Two configurations of the licence: \`licence_dc_sd_jwt\` (format dc+sd-jwt, vct the licence type) and \`licence_jwt_vc_json\` (format jwt_vc_json, the W3C VC 2.0 vc+jwt); both bound to the wallet's key (jwk, did:jwk or did:key), proof type jwt with ES256.`,
      responses: { 200: { description: "Metadata", schema: CredentialIssuerMetadata } },
      handler: () => ({ body: issuance().issuerMetadata, headers: { "Cache-Control": "public, max-age=300" } }),
    }),
    route.get("/.well-known/oauth-authorization-server", "getAuthorizationServerMetadata", {
      summary: "OAuth authorization server metadata of the OID4VCI token endpoint (RFC 8414)",
      description:
        "Only the pre-authorized code grant, without client authentication (`pre-authorized_grant_anonymous_access_supported`).",
      responses: { 200: { description: "Metadata", schema: AuthorizationServerMetadata } },
      handler: () => ({
        body: issuance().authorizationServerMetadata,
        headers: { "Cache-Control": "public, max-age=300" },
      }),
    }),
    route.get(`${OID4VCI_PATHS.offer}/:code`, "getCredentialOffer", {
      summary: "A credential offer by reference (its credential_offer_uri)",
      description:
        "The offer object while its pre-authorized code is unused and unexpired; 404 afterwards. The path holds the code: the URI is as secret as the offer.",
      params: PreAuthorizedCodeParams,
      responses: {
        200: { description: "The credential offer", schema: CredentialOfferObject },
        400: "Not a pre-authorized code",
        404: "Unknown, used or expired",
      },
      handler: async ({ params }) => ({
        body: await issuance().offerByReference(params.code),
        headers: NO_STORE,
      }),
    }),
    route.post(OID4VCI_PATHS.token, "oid4vciToken", {
      summary: "OID4VCI token endpoint: a pre-authorized code for an access token",
      description: [
        `grant_type \`urn:ietf:params:oauth:grant-type:pre-authorized_code\`, no client authentication, no tx_code. The code is spent by its first use, even a failed one. The access token (at+jwt, ES256 by the issuer's key, ${ACCESS_TOKEN_TTL_SECONDS} s) is for the credential endpoint of this offer only; DPoP is not used.`,
        "Errors (`{error, error_description}`, 400, `Cache-Control: no-store`): `invalid_request`, `unsupported_grant_type`, `invalid_grant` (unknown, already used or expired code).",
      ].join("\n\n"),
      idempotent: false,
      errorBody: "oauth",
      body: TokenRequest,
      bodyType: "form",
      responses: {
        200: { description: "Access token", schema: AccessTokenResponse },
        400: { description: "invalid_request, unsupported_grant_type, invalid_grant", schema: OAuthErrorSchema },
      },
      handler: ({ ctx }) => answered(() => issuance().token(requestLike(ctx), bodyOf(ctx))),
    }),
    route.post(OID4VCI_PATHS.nonce, "oid4vciNonce", {
      summary: "OID4VCI nonce endpoint: a c_nonce for the wallet's proof",
      description: `Valid ${NONCE_TTL_SECONDS} s, spent by the first credential request whose proof carries it.`,
      idempotent: false,
      responses: { 200: { description: "A fresh c_nonce", schema: NonceResponse } },
      handler: () => answered(() => issuance().nonce()),
    }),
    route.post(OID4VCI_PATHS.credential, "oid4vciCredential", {
      summary: "OID4VCI credential endpoint: the licence credential, bound to the wallet's key",
      description: [
        "`Authorization: Bearer <access token of the token endpoint>` (API tokens are not accepted here). The body names a credential_configuration_id and carries one proof in `proofs.jwt`: typ openid4vci-proof+jwt, ES256, the public key in the header's `jwk` or named by a `kid` that is a did:jwk or a P-256 did:key (resolved locally; other DIDs are invalid_proof), aud = the credential issuer, nonce from the nonce endpoint (spent here). The answer is `{credentials: [{credential}]}`, a dc+sd-jwt or vc+jwt whose `cnf.jwk` is the proof's key, made as by the holder download; only while the licence stands.",
        "Errors (`{error, error_description}`, `Cache-Control: no-store`): 401 `invalid_token` (missing, expired or not ours); 400 `invalid_credential_request`, `unknown_credential_configuration`, `invalid_proof` (not one valid ES256 jwt proof for this issuer), `invalid_nonce` (unknown, expired or used), `credential_request_denied` (the licence is suspended, revoked or expired).",
      ].join("\n\n"),
      idempotent: false,
      errorBody: "oauth",
      ownAuthorization: true,
      body: CredentialRequest,
      responses: {
        200: { description: "The credential", schema: CredentialResponse },
        400: { description: "The request or its proof is refused", schema: Oid4vciError },
        401: { description: "invalid_token", schema: Oid4vciError },
      },
      handler: async ({ ctx }) => {
        const authorization = ctx.get("authorization") || undefined;
        // The wallet's token is checked here, not by the API's authenticator: its failures count the same way.
        if (authorization) await failures?.admit(authorization, ctx.ip);
        const result = await answered(() => issuance().credential(authorization, bodyOf(ctx)));
        if (result.status === 401 && authorization) await failures?.failed(authorization, ctx.ip);
        return result;
      },
    }),
  ];
  const api: RouteDefinition[] = [
    route.post("/requests/:requestId/credential-offer", "createCredentialOffer", {
      summary: "An OID4VCI credential offer of the issued licence, for the holder's wallet",
      description: `For whoever may download the credential (the applicant, or a client acting for the applicant with applications:read). Pre-authorized code flow: the code is single-use and redeemable for ${OFFER_TTL_SECONDS / 60} minutes, stored hashed; no tx_code (the offer is handed only to the authenticated holder). Both formats are offered. The answer carries the offer by value, by reference (credential_offer_uri) and as a QR code of the reference. Each call makes a new offer.`,
      access: [{ kind: "applicant" }, { kind: "client", scope: "applications:read" }],
      idempotent: false,
      params: z.object({ requestId: z.uuid() }),
      responses: {
        201: { description: "The offer", schema: CredentialOffer },
        401: "Not authenticated",
        404: "No such request (or not yours)",
        409: "NOT_ISSUED: the licence was never issued; LICENCE_NOT_VALID: suspended, revoked or expired",
      },
      handler: async ({ params, principal }) => ({
        status: 201,
        body: await issuance().offer(principal, params.requestId),
        headers: NO_STORE,
      }),
    }),
    route.post("/verify/holder/:tokenId/credential-offer", "createHolderCredentialOffer", {
      summary: "The same credential offer, for whoever proves to hold the licence (its holder proof)",
      description: [
        "Public: the identity and salt the applicant got from GET /requests/{id}/identity-proof stand in for a sign-in (the verification page offers the licence to the holder's wallet this way). When they open the commitment recorded at mint (the check of POST /verify/holder/{tokenId}), the answer is POST /requests/{id}/credential-offer's, made by the same code.",
        "404 NOT_FOUND: no such licence, as POST /verify/holder says; 403 HOLDER_MISMATCH: the pair does not open the commitment (what `matches: false` says there, nothing more), and nothing is stored. A wrong pair counts as a failed credential (`holder:<tokenId>` from this address, then the address), as a wrong API key does. Then the applicant's 409s.",
      ].join("\n\n"),
      idempotent: false,
      params: HolderTokenParams,
      body: HolderProofInput,
      responses: {
        201: { description: "The offer", schema: CredentialOffer },
        403: "HOLDER_MISMATCH: this identity and salt do not open the licence's commitment",
        404: "No such licence",
        409: "NOT_ISSUED: the licence was never issued; LICENCE_NOT_VALID: suspended, revoked or expired",
      },
      handler: async ({ ctx, params, body }) => {
        const credential = `holder:${params.tokenId}`;
        await failures?.admit(credential, ctx.ip);
        try {
          const proof = { tokenId: BigInt(params.tokenId), ...body };
          return { status: 201, body: await holderCredentialOffer(context, issuance(), proof), headers: NO_STORE };
        } catch (error) {
          if (error instanceof AppError && error.code === HOLDER_MISMATCH) await failures?.failed(credential, ctx.ip);
          throw error;
        }
      },
    }),
  ];
  return { api, root };
}
