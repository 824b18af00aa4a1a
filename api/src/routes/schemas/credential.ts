/** The wallet credential's schemas: the issuer's DID document. */
import { z } from "zod/v4";

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
