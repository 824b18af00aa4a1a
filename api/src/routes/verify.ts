/**
 * Verification, public and unauthenticated: a licence by token id or by its signed QR payload, a document by its
 * SHA-256; the issuer address QR signatures are checked against; the QR image of an issued licence (its readers);
 * and the verification page for people (at /verify, linked from /).
 */
import { revalidatedBy } from "../http/conditionalGet.ts";
import { z } from "zod/v4";
import type { DomainContext } from "../domain/context.ts";
import { conflict } from "../domain/errors.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { tokenIdOfLicenceNumber } from "../reads/licenceNumberReads.ts";
import { findVisibleRequest } from "../domain/access.ts";
import { DateTime, RequestStatus } from "./schemas/common.ts";
import { verifyDocument } from "../domain/verification/documentVerification.ts";
import {
  SIGNED_BY,
  unknownLicence,
  unnamedLicence,
  verifyLicence,
  verificationDependencies,
} from "../domain/verification/licenceVerification.ts";
import { CREDENTIAL_PROBLEMS, verifyCredential } from "../domain/verification/credentialVerification.ts";
import { qrPng, qrSvg } from "../domain/verification/qrImage.ts";
import { payloadFrom, verifyPayload, type QrIssuer } from "../domain/verification/qrPayload.ts";
import { verificationPage } from "./verificationPage.ts";
import { DOCUMENT_VERDICTS, LICENCE_VERDICTS, licenceMessage } from "../domain/verification/verdicts.ts";

const route = routeGroup({ tags: ["Verification"], access: [{ kind: "public" }] });

const READERS = [
  { kind: "applicant" as const },
  { kind: "client" as const, scope: "applications:read" as const },
  { kind: "apiKey" as const },
];
const dateTime = DateTime;

const VerificationResponse = z
  .object({
    isValid: z
      .boolean()
      .describe("True only for an issued licence that is not expired, suspended or revoked (from the chain)"),
    verdict: z.enum(LICENCE_VERDICTS),
    message: z.string().describe("The verdict in plain words"),
    tokenId: z.int().nullable(),
    requestNumber: z.string().nullable(),
    requestType: z.string().nullable(),
    status: RequestStatus.nullable(),
    applicantName: z.string().nullable(),
    issuedAt: dateTime.nullable(),
    expiresAt: dateTime.nullable(),
    approvals: z
      .array(
        z.object({
          departmentCode: z.string(),
          departmentName: z.string(),
          stage: z.int().describe("The stage's number, from 1: its stageOrder in the workflow"),
          approvedAt: dateTime,
          transactionHash: z.string(),
          signer: z.string().nullable().describe("The department wallet that signed the approval"),
          signedBy: z
            .enum(SIGNED_BY)
            .nullable()
            .describe(
              "Extension. PLATFORM: a custodial key the platform holds signed for the department. DEPARTMENT_KEY: a key or Safe the department holds. DEPARTMENT_REVIEWERS: the department's passkey account, so reviewerThreshold of its reviewers approved with their own passkeys, each assertion checked on chain",
            ),
          reviewerThreshold: z
            .int()
            .nullable()
            .describe("DEPARTMENT_REVIEWERS: how many reviewers' passkeys the account needs (its threshold now)"),
        }),
      )
      .describe("The approvals standing on chain (an approval invalidated by a newer document version is not listed)"),
    blockchainProof: z
      .object({
        chainId: z.int(),
        contractAddress: z.string(),
        tokenId: z.int(),
        ownerAddress: z.string(),
        transactionHash: z.string().nullable().describe("The issuance transaction (the mint while not issued)"),
        mintTransactionHash: z.string().nullable(),
      })
      .nullable(),
    qr: z.object({ issuer: z.string(), signatureValid: z.boolean() }).optional().describe("QR verification only"),
    checkedAt: dateTime,
  })
  .meta({ id: "VerificationResponse" });

const CredentialVerificationResponse = VerificationResponse.extend({
  credential: z
    .object({
      format: z.enum(["vc+jwt", "dc+sd-jwt"]).nullable().describe("null when the input is neither"),
      issuer: z.string().nullable().describe("The issuer the credential names (iss, or the VC's issuer)"),
      signatureValid: z.boolean().describe("Signed by the key this service's DID document publishes"),
      reason: z
        .enum(CREDENTIAL_PROBLEMS)
        .nullable()
        .describe("Verdict INVALID_CREDENTIAL only: the first check that failed (see the operation's description)"),
      status: z
        .object({
          list: z.int(),
          index: z.int(),
          revocation: z.int().nullable().describe("vc+jwt: the revocation Bitstring Status List's bit (1 revoked)"),
          suspension: z.int().nullable().describe("vc+jwt: the suspension Bitstring Status List's bit (1 suspended)"),
          tokenStatus: z
            .int()
            .nullable()
            .describe("dc+sd-jwt: the Token Status List's value (0 valid, 1 revoked, 2 suspended)"),
        })
        .nullable()
        .describe("What this service's status lists (built from the index) say of the credential's entry"),
      validFrom: dateTime.nullable(),
      validUntil: dateTime.nullable(),
      withinValidity: z.boolean().nullable().describe("Whether now is between validFrom and validUntil"),
      disclosed: z
        .record(z.string(), z.unknown())
        .describe("The claims presented: a vc+jwt's credentialSubject; an SD-JWT's disclosed claims, and only those"),
      keyBinding: z
        .object({ aud: z.unknown(), nonce: z.unknown(), iat: z.unknown() })
        .nullable()
        .describe("The verified key-binding JWT's claims (checking aud and nonce is the relying party's)"),
    })
    .describe("What the credential itself says, and which of its checks passed"),
}).meta({ id: "CredentialVerificationResponse" });

const DocumentVerificationResponse = z
  .object({
    isValid: z.boolean().describe("True when the hash is anchored on chain and is the latest version of its document"),
    isLatest: z.boolean(),
    verdict: z.enum(DOCUMENT_VERDICTS),
    message: z.string(),
    documentId: z.uuid(),
    requestId: z.uuid().nullable(),
    tokenId: z.int(),
    docType: z.string().nullable(),
    version: z.int(),
    uploadedAt: dateTime,
    blockchainRecord: z.object({
      transactionHash: z.string().nullable(),
      blockNumber: z.int(),
      timestamp: dateTime,
      contractAddress: z.string(),
    }),
  })
  .meta({ id: "DocumentVerificationResponse" });

/** As normaliseHash reads it (any case, 0x optional), so the document states what is accepted. */
const DocumentHash = z
  .string()
  .regex(/^(0[xX])?[0-9a-fA-F]{64}$/, "A document hash is 64 hexadecimal digits (SHA-256), with or without 0x")
  .describe("SHA-256 of the document: 64 hexadecimal digits, with or without 0x, any case");
// The licence number people read on the page and the certificate (RL-2026-000001) is accepted as well as the token id.
const TokenIdParams = z.object({
  tokenId: z
    .string()
    .regex(
      /^\d{1,13}$|^[A-Za-z]{2}-\d{4}-\d{6,12}$/,
      "a token id (a whole number) or a licence number such as RL-2026-000001",
    )
    .describe("Token id (integer) or licence number (e.g. RL-2026-000001)"),
});

export function verifyRoutes(
  context: DomainContext,
  issuer: QrIssuer,
): { api: RouteDefinition[]; root: RouteDefinition[] } {
  const deps = verificationDependencies(context);
  const credentials = { licences: deps, service: context };
  const base = context.config.publicBaseUrl!;
  /** The signed payload of an issued licence and the URL its QR code holds. */
  const qrOf = async (tokenId: bigint) => {
    const payload = await issuer.sign({
      chainId: context.config.chainId,
      contract: context.contracts.LicenceToken,
      tokenId,
    });
    return { payload, url: `${base}/verify?qr=${payload}` };
  };
  const invalidQr = () => ({
    ...unnamedLicence("INVALID_QR", licenceMessage("INVALID_QR")),
    qr: { issuer: issuer.address, signatureValid: false },
  });

  const api: RouteDefinition[] = [
    route.get("/verify/issuer", "verificationIssuer", {
      summary: "The address whose signature every licence QR code carries",
      responses: {
        200: {
          description: "Issuer",
          schema: z.object({
            issuerAddress: z.string(),
            chainId: z.int(),
            contracts: z.record(z.string(), z.string()),
            qrFormat: z.string(),
          }),
        },
      },
      handler: async () => ({
        body: {
          issuerAddress: issuer.address,
          chainId: context.config.chainId,
          contracts: context.contracts,
          qrFormat: "LAP1.<chainId>.<contract hex>.<tokenId>.<base64url EIP-191 signature of the part before it>",
        },
      }),
    }),
    route.get("/verify/qr/:qrCode", "verifyQr", {
      summary: "Verify a licence from its QR code (the payload, or the URL the code holds)",
      description:
        "The signature is checked first: a code not signed by the platform's issuer key, for another chain or contract, or altered in any way is `isValid: false`, verdict INVALID_QR. Then the licence is checked on chain exactly as GET /verify/{tokenId}.",
      params: z.object({ qrCode: z.string().min(1).max(2048) }),
      responses: {
        200: { description: "Verdict", schema: VerificationResponse },
        404: "Signed for a token that does not exist",
      },
      handler: async ({ params }) => {
        const claim = verifyPayload(payloadFrom(params.qrCode), issuer.address);
        if (!claim || claim.chainId !== context.config.chainId || claim.contract !== context.contracts.LicenceToken)
          return { body: invalidQr() };
        return {
          body: { ...(await verifyLicence(deps, claim.tokenId)), qr: { issuer: issuer.address, signatureValid: true } },
        };
      },
    }),
    route.post("/verify/credential", "verifyCredential", {
      summary: "Verify a presented licence credential (vc+jwt, or an SD-JWT VC presentation)",
      description:
        "`credential`: a compact vc+jwt, or an SD-JWT VC as a wallet presents it (issuer-signed JWT ~ disclosures ~, with or without a key-binding JWT). The credential is checked first, in this order; the first failure is verdict INVALID_CREDENTIAL with `credential.reason`: MALFORMED (neither format), UNKNOWN_ISSUER (iss, issuer or kid not this service's did:web), BAD_SIGNATURE (not signed by the key its DID document publishes), NOT_A_LICENCE (not a licence credential of this chain's LicenceToken), TAMPERED (a disclosure none of the signed digests names), KEY_BINDING (a key-binding JWT not signed by the cnf key or not over this presentation; aud and nonce are reported for the relying party to check), NOT_YET_VALID. Then this service's status lists are read for its entry and the licence it names is verified on chain exactly as GET /verify/{tokenId}: that verdict is the answer, except that a credential past its validUntil is EXPIRED. Nothing is stored. Rate-limited per client address as the other public verification routes (429 RATE_LIMITED).",
      idempotent: false,
      body: z
        .object({ credential: z.string().min(1).max(65_536).describe("The compact credential or presentation") })
        .meta({ id: "CredentialPresentation" }),
      responses: {
        200: { description: "Verdict, with what the credential says", schema: CredentialVerificationResponse },
        400: "No credential string in the body",
      },
      handler: async ({ body }) => ({ body: await verifyCredential(credentials, body.credential) }),
    }),
    route.get("/verify/document/:hash", "verifyDocument", {
      summary: "Verify a document by its SHA-256 (hex, with or without 0x, any case)",
      params: z.object({ hash: DocumentHash }),
      query: z.object({
        tokenId: z.coerce
          .number()
          .int()
          .min(1)
          .max(2 ** 40 - 1)
          .optional()
          .describe("The licence (token id) to check the document against; without it, the record chosen as below"),
      }),
      description:
        "A file may be anchored in several requests, once in each (a certificate used for two licences, a blank form): the answer is one record. With `tokenId`, the record in that licence (404 if the file is not one of its documents). Without it, the record that says most about the file: on an issued licence first, then the document's latest version, then an APPROVED licence, then the earliest anchored; only one record is ever shown, never a list that would link requests. requestId is null unless the document's licence has been issued (a file someone holds must not lead to a draft's or a rejected request's applicant).",
      responses: {
        200: { description: "Verdict", schema: DocumentVerificationResponse },
        400: "Not a SHA-256 in hex, or not a token id",
        404: "No document with this hash is anchored (in the licence asked about)",
      },
      handler: async ({ params, query }) => ({
        body: await verifyDocument(deps, params.hash, query.tokenId === undefined ? undefined : BigInt(query.tokenId)),
      }),
    }),
    route.get("/verify/:tokenId", "verifyLicence", {
      summary: "Verify a licence by token id or licence number",
      description:
        "Validity, status, owner and the standing approvals come from contract calls (LicenceToken.validityOf, ownerOf; ApprovalRegistry.decisionsOf); names and transaction hashes from the index. A token that is not an issued licence (verdict NOT_ISSUED: a draft, a request under review or awaiting resubmission, cancelled or rejected) is answered with its verdict and status only: no applicant, request, approvals or owner address. Public verification routes are rate-limited per client address (429 RATE_LIMITED).",
      params: TokenIdParams,
      responses: {
        200: { description: "Verdict, with an ETag that changes when the verdict does", schema: VerificationResponse },
        304: "Not modified: If-None-Match holds the verdict's current ETag",
        400: "Neither a token id nor a licence number",
        404: "No such token or licence number (verdict UNKNOWN)",
      },
      handler: async ({ params }) => {
        const tokenId = /^\d+$/.test(params.tokenId)
          ? BigInt(params.tokenId)
          : await tokenIdOfLicenceNumber(context.pool, params.tokenId);
        if (tokenId === undefined) throw unknownLicence();
        const { checkedAt, ...verdict } = await verifyLicence(deps, tokenId);
        return { body: { ...verdict, checkedAt }, headers: revalidatedBy(verdict) };
      },
    }),
    route.get("/requests/:requestId/qr", "getLicenceQr", {
      summary: "The QR code of an issued licence (PNG, SVG, or the payload as JSON)",
      description:
        "The code holds the verification page's URL with the signed payload: scanning it with a phone opens the verdict.",
      access: READERS,
      params: z.object({ requestId: z.uuid() }),
      query: z.object({ format: z.enum(["png", "svg", "json"]).default("png") }),
      responses: {
        200: { description: "The QR code", contentType: "image/png" },
        401: "Not authenticated",
        404: "No such request (or not yours)",
        409: "NOT_ISSUED: the licence was never issued",
      },
      handler: async ({ params, query, principal }) => {
        const request = await findVisibleRequest(context.pool, principal, params.requestId);
        if (!request.issuedAt)
          throw conflict("NOT_ISSUED", "The licence has not been issued, so it has no QR code", {
            status: request.status,
          });
        const qr = await qrOf(request.tokenId);
        if (query.format === "json")
          return { body: { ...qr, tokenId: Number(request.tokenId), issuerAddress: issuer.address } };
        if (query.format === "svg") return { body: await qrSvg(qr.url), headers: { "content-type": "image/svg+xml" } };
        return { body: await qrPng(qr.url), headers: { "content-type": "image/png" } };
      },
    }),
  ];
  return { api, root: verificationPage() };
}
