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
