/** The wallet credential's schemas: the issuer's DID document, the SD-JWT VC type metadata, the download query. */
import { z } from "zod/v4";
import { CREDENTIAL_FORMATS } from "../../domain/credentials/licenceCredential.ts";
import { STATUS_LIST_KINDS } from "../../domain/credentials/statusListCredentials.ts";

const PublicJwk = z
  .object({ kty: z.literal("EC"), crv: z.literal("P-256"), x: z.string(), y: z.string() })
  .meta({ id: "PublicJwk" });

export const DidDocument = z
  .object({
    "@context": z.array(z.string()),
    id: z.string().describe("did:web of PUBLIC_BASE_URL"),
    verificationMethod: z.array(
      z.object({
        id: z.string().describe("`<did>#credential-key-1`: the `kid` of every credential and status list"),
        type: z.literal("JsonWebKey"),
        controller: z.string(),
        publicKeyJwk: PublicJwk,
      }),
    ),
    assertionMethod: z.array(z.string()),
  })
  .meta({ id: "DidDocument" });

export const LicenceTypeMetadata = z
  .object({
    vct: z.string(),
    name: z.string(),
    description: z.string(),
    claims: z.array(
      z.object({
        path: z.array(z.string()),
        sd: z.enum(["always", "never", "allowed"]),
        display: z.array(z.object({ locale: z.string(), label: z.string() })),
      }),
    ),
  })
  .meta({ id: "LicenceTypeMetadata" });

export const CredentialQuery = z.object({
  format: z
    .enum(CREDENTIAL_FORMATS)
    .describe("vc+jwt: W3C VC 2.0 signed as a JWS (VC-JOSE-COSE). dc+sd-jwt: SD-JWT VC with selective disclosure"),
  holderKey: z
    .string()
    .max(2048)
    .regex(/^[A-Za-z0-9_-]+$/, "base64url")
    .optional()
    .describe("dc+sd-jwt only: the holder's public JWK as base64url JSON, bound as `cnf` (key binding)"),
});

export const StatusListParams = z.object({
  list: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 24)
    .describe("The list number: token id div 131,072"),
  kind: z.enum(STATUS_LIST_KINDS),
});

/** The credential endpoint's error body (OID4VCI 1.0 §8.3.1.2, and RFC 6750 invalid_token). */
export const Oid4vciError = z
  .object({
    error: z.enum([
      "invalid_token",
      "invalid_credential_request",
      "unknown_credential_configuration",
      "invalid_proof",
      "invalid_nonce",
      "credential_request_denied",
    ]),
    error_description: z.string().optional(),
  })
  .meta({ id: "Oid4vciError", description: "OID4VCI credential endpoint error" });

export const CredentialIssuerMetadata = z
  .looseObject({
    credential_issuer: z.string().describe("PUBLIC_BASE_URL"),
    credential_endpoint: z.string(),
    nonce_endpoint: z.string(),
    credential_configurations_supported: z.record(z.string(), z.looseObject({ format: z.string() })),
    display: z.array(z.looseObject({ name: z.string(), locale: z.string() })),
  })
  .meta({ id: "CredentialIssuerMetadata", description: "OID4VCI 1.0 credential issuer metadata" });

export const AuthorizationServerMetadata = z
  .looseObject({ issuer: z.string(), token_endpoint: z.string(), grant_types_supported: z.array(z.string()) })
  .meta({ id: "AuthorizationServerMetadata", description: "RFC 8414 metadata of the token endpoint" });

export const CredentialOfferObject = z
  .looseObject({
    credential_issuer: z.string(),
    credential_configuration_ids: z.array(z.string()),
    grants: z.looseObject({
      "urn:ietf:params:oauth:grant-type:pre-authorized_code": z.looseObject({ "pre-authorized_code": z.string() }),
    }),
  })
  .meta({ id: "CredentialOfferObject", description: "OID4VCI 1.0 credential offer (pre-authorized code grant)" });

export const CredentialOffer = z
  .object({
    credentialOffer: CredentialOfferObject,
    credentialOfferUri: z.string().describe("openid-credential-offer://?credential_offer=… (the offer by value)"),
    credentialOfferReference: z.string().describe("credential_offer_uri: where the offer is served"),
    credentialOfferReferenceUri: z
      .string()
      .describe("openid-credential-offer://?credential_offer_uri=… (the offer by reference; what the QR code holds)"),
    qrSvg: z.string().describe("SVG QR code of credentialOfferReferenceUri"),
    expiresAt: z.iso.datetime().describe("The pre-authorized code is redeemable until then, once"),
  })
  .meta({ id: "CredentialOffer" });

export const AccessTokenResponse = z
  .looseObject({ access_token: z.string(), token_type: z.string().describe("Bearer"), expires_in: z.number().int() })
  .meta({ id: "Oid4vciAccessTokenResponse" });

export const NonceResponse = z
  .looseObject({ c_nonce: z.string(), c_nonce_expires_in: z.number().int() })
  .meta({ id: "NonceResponse" });

export const CredentialResponse = z
  .looseObject({ credentials: z.array(z.object({ credential: z.string() })) })
  .meta({ id: "CredentialResponse" });

export const PreAuthorizedCodeParams = z.object({
  code: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/, "a pre-authorized code")
    .describe("The offer's pre-authorized code"),
});

/** What a holder presents: to POST /verify/holder/{tokenId}, and to ask for a credential offer there. */
export const HolderTokenParams = z.object({
  tokenId: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 40 - 1),
});
export const HolderProofInput = z
  .object({
    applicantId: z.string().min(1).max(256),
    salt: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "32 bytes as 0x-prefixed hex"),
  })
  .meta({ id: "HolderProofInput" });
