/**
 * Holder proof: the applicant's salt (GET, the applicant only) and the public check of a presented identity and salt
 * against the commitment recorded on chain at mint (POST, anyone).
 */
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import { checkHolder, identityProof } from "../domain/requests/holderProof.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { HolderProofInput, HolderTokenParams } from "./schemas/credential.ts";

const route = routeGroup({ tags: ["Verification"] });

export function holderProofRoutes(context: DomainContext): RouteDefinition[] {
  return [
    route.get("/requests/:requestId/identity-proof", "getIdentityProof", {
      summary: "Your proof that this licence is yours: your identity-locker id and the salt of its on-chain commitment",
      description:
        "The applicant only (anyone else: 403, or 404 when they may not see the request). The mint recorded commitment = keccak256(salt ‖ UTF-8 applicantId) in the token's LicenceMinted event; the chain names no one. Show applicantId and salt to a verifier (POST /verify/holder/{tokenId}, or the verification page), who checks them against the chain.",
      access: [{ kind: "applicant" }],
      params: z.object({ requestId: z.uuid() }),
      responses: {
        200: {
          description: "The proof material",
          schema: z
            .object({
              requestId: z.string(),
              tokenId: z.number(),
              applicantId: z.string(),
              salt: z.string(),
              commitment: z.string(),
            })
            .meta({ id: "IdentityProof" }),
        },
        401: "Not authenticated",
        403: "Not the applicant",
        404: "No such request",
        409: "NO_COMMITMENT: minted before commitments were recorded",
      },
      handler: async ({ params, principal }) => ({ body: await identityProof(context, principal, params.requestId) }),
    }),
    route.post("/verify/holder/:tokenId", "verifyHolder", {
      summary: "Check that a presented identity and salt open the licence's on-chain applicant commitment",
      description:
        "Public. Recomputes keccak256(salt ‖ UTF-8 applicantId) and compares it with the commitment in the token's LicenceMinted event, read from the chain. `matches: true` proves the presenter knows the salt the applicant was given for this licence and the identity it commits to; the answer reveals nothing else.",
      access: [{ kind: "public" }],
      idempotent: false,
      params: HolderTokenParams,
      body: HolderProofInput,
      responses: {
        200: {
          description: "Whether the proof matches",
          schema: z
            .object({
              tokenId: z.number(),
              matches: z.boolean(),
              commitment: z.string(),
              mintTransactionHash: z.string(),
            })
            .meta({ id: "HolderProofResult" }),
        },
        400: "Invalid body or token id",
        404: "No such licence",
      },
      handler: async ({ params, body }) => ({
        body: await checkHolder(context, BigInt(params.tokenId), body.applicantId, body.salt),
      }),
    }),
  ];
}
