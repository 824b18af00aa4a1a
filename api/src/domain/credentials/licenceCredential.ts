/**
 * An issued licence as a credential the holder carries, in the two formats wallets speak:
 * - `vc+jwt`: a W3C VC 2.0 document signed as a JWS (VC-JOSE-COSE), whose credentialStatus names the revocation and
 *   suspension Bitstring Status Lists and the soulbound token on chain; it carries no personal data;
 * - `dc+sd-jwt`: an SD-JWT VC where the licence number, type, holder name, premises and conditions are selectively
 *   disclosable, its status the Token Status List, optionally bound to the holder's key (cnf).
 * Both carry the evidence: the SHA-256 of every anchored document (latest versions) and the approvals that issued
 * the licence, with a digest of them. Everything comes from the index and the request; nothing from the caller.
 */
import { createHash, createPublicKey, type JsonWebKey } from "node:crypto";
import { digest, generateSalt } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance, type SdJwtVcPayload } from "@sd-jwt/sd-jwt-vc";
import { canonicalJson } from "../../encoding/canonicalJson.ts";
import { credentialEvidence, type CredentialEvidenceRows } from "../../reads/credentialReads.ts";
import type { RequestView } from "../../reads/requestReads.ts";
import type { DomainContext } from "../context.ts";
import type { Principal } from "../../auth/principal.ts";
import { findVisibleRequest } from "../access.ts";
import { conflict, validationFailed } from "../errors.ts";
import { issuerIdentity, type IssuerIdentity } from "./issuerIdentity.ts";
import { statusListUrl } from "./statusListCredentials.ts";
import { statusPosition } from "./statusLists.ts";

export const CREDENTIAL_FORMATS = ["vc+jwt", "dc+sd-jwt"] as const;
export type CredentialFormat = (typeof CREDENTIAL_FORMATS)[number];

/** The soulbound token entry of a vc+jwt's credentialStatus (our own type: the token's status is read on chain). */
export const TOKEN_STATUS_ENTRY_TYPE = "LicenceTokenStatusEntry";

/** The SD-JWT VC type, served as type metadata at this path under PUBLIC_BASE_URL. */
export const LICENCE_VCT_PATH = "/credentials/types/licence";

export interface CredentialContext {
  pool: DomainContext["pool"];
  signer: DomainContext["credentialSigner"];
  publicBaseUrl: string;
  chainId: number;
  licenceToken: string;
}

export function credentialContext(
  context: Pick<DomainContext, "pool" | "credentialSigner" | "config" | "contracts">,
): CredentialContext {
  return {
    pool: context.pool,
    signer: context.credentialSigner,
    publicBaseUrl: context.config.publicBaseUrl!,
    chainId: context.config.chainId,
    licenceToken: context.contracts.LicenceToken,
  };
}

/** What the credential says of a licence, before either format shapes it. */
export interface LicenceClaims {
  licenceNumber: string;
  licenceType: string;
  holderName: string;
  /** From the request's metadata, when it has them (the spec's metadata is free-form). */
  premises?: unknown;
  conditions?: unknown;
  validFrom: Date;
  validUntil?: Date;
  tokenId: bigint;
  evidence: ReturnType<typeof evidenceOf>;
}

/**
 * The claims of an issued licence that stands (APPROVED): a request never issued is 409 NOT_ISSUED; a suspended,
 * revoked or expired one 409 LICENCE_NOT_VALID (a credential is handed out only while the licence is valid).
 */
export async function licenceClaims(context: CredentialContext, request: RequestView): Promise<LicenceClaims> {
  if (!request.issuedAt)
    throw conflict("NOT_ISSUED", "The licence has not been issued, so it has no credential", {
      status: request.status,
    });
  if (request.status !== "APPROVED")
    throw conflict("LICENCE_NOT_VALID", `The licence is ${request.status.toLowerCase()}: no credential is issued`, {
      status: request.status,
    });
  const { premises, conditions } = request.metadata;
  return {
    licenceNumber: request.requestNumber,
    licenceType: request.requestType,
    holderName: request.applicantName,
    ...(premises === undefined ? {} : { premises }),
    ...(conditions === undefined ? {} : { conditions }),
    validFrom: request.issuedAt,
    ...(request.expiresAt ? { validUntil: request.expiresAt } : {}),
    tokenId: request.tokenId,
    evidence: evidenceOf(await credentialEvidence(context.pool, request.tokenId)),
  };
}

/** The documents and decisions, and the SHA-256 of the decisions' canonical JSON (what a verifier recomputes). */
export function evidenceOf({ documents, decisions }: CredentialEvidenceRows) {
  const decisionsDigest = `0x${createHash("sha256").update(canonicalJson(decisions)).digest("hex")}`;
  return { documents, decisions, decisionsDigest };
}

export async function issueCredential(
  context: CredentialContext,
  claims: LicenceClaims,
  format: CredentialFormat,
  holderKey?: JsonWebKey,
): Promise<string> {
  const issuer = issuerIdentity(context.publicBaseUrl);
  return format === "vc+jwt" ? vcJwt(context, issuer, claims, holderKey) : sdJwtVc(context, issuer, claims, holderKey);
}

/** The VC 2.0 document of a licence (no holder name: a vc+jwt cannot withhold it). */
export function vcDocument(context: CredentialContext, issuer: IssuerIdentity, claims: LicenceClaims) {
  const { list, index } = statusPosition(claims.tokenId);
  const bitstringEntry = (purpose: "revocation" | "suspension") => {
    const url = statusListUrl(context.publicBaseUrl, list, purpose);
    return {
      id: `${url}#${index}`,
      type: "BitstringStatusListEntry",
      statusPurpose: purpose,
      statusListIndex: String(index),
      statusListCredential: url,
    };
  };
  return {
    "@context": ["https://www.w3.org/ns/credentials/v2"],
    type: ["VerifiableCredential", "LicenceCredential"],
    issuer: issuer.did,
    validFrom: claims.validFrom.toISOString(),
    ...(claims.validUntil ? { validUntil: claims.validUntil.toISOString() } : {}),
    credentialSubject: {
      type: "Licence",
      licenceNumber: claims.licenceNumber,
      licenceType: claims.licenceType,
      ...(claims.premises === undefined ? {} : { premises: claims.premises }),
      ...(claims.conditions === undefined ? {} : { conditions: claims.conditions }),
    },
    credentialStatus: [
      bitstringEntry("revocation"),
      bitstringEntry("suspension"),
      {
        // CAIP-19: the token on its chain, for verifiers that read the contract (validityOf) themselves.
        id: `eip155:${context.chainId}/erc721:${context.licenceToken}/${claims.tokenId}`,
        type: TOKEN_STATUS_ENTRY_TYPE,
        chainId: context.chainId,
        contractAddress: context.licenceToken,
        tokenId: claims.tokenId.toString(),
      },
    ],
    evidence: [{ type: ["LicenceIssuanceEvidence"], ...claims.evidence }],
  };
}

async function vcJwt(
  context: CredentialContext,
  issuer: IssuerIdentity,
  claims: LicenceClaims,
  holderKey?: JsonWebKey,
): Promise<string> {
  // The JWT claims repeat what the document says (VC-JOSE-COSE allows it when they agree), so that any JWT library
  // refuses the credential before validFrom and after validUntil. cnf: the wallet's key, when issued by OID4VCI.
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
  const jwtClaims = {
    iss: issuer.did,
    iat: seconds(new Date()),
    nbf: seconds(claims.validFrom),
    ...(claims.validUntil ? { exp: seconds(claims.validUntil) } : {}),
    ...(holderKey ? { cnf: { jwk: holderKey } } : {}),
  };
  const payload = new TextEncoder().encode(JSON.stringify({ ...vcDocument(context, issuer, claims), ...jwtClaims }));
  return context.signer.signJws({ typ: "vc+jwt", cty: "vc", kid: issuer.kid }, payload);
}

async function sdJwtVc(
  context: CredentialContext,
  issuer: IssuerIdentity,
  claims: LicenceClaims,
  holderKey?: JsonWebKey,
): Promise<string> {
  const { list, index } = statusPosition(claims.tokenId);
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
  const payload: SdJwtVcPayload = {
    iss: issuer.did,
    vct: `${context.publicBaseUrl}${LICENCE_VCT_PATH}`,
    iat: Math.floor(Date.now() / 1000),
    nbf: seconds(claims.validFrom),
    ...(claims.validUntil ? { exp: seconds(claims.validUntil) } : {}),
    ...(holderKey ? { cnf: { jwk: holderKey } } : {}),
    status: { status_list: { idx: index, uri: statusListUrl(context.publicBaseUrl, list, "token-status") } },
    licence_number: claims.licenceNumber,
    licence_type: claims.licenceType,
    holder_name: claims.holderName,
    ...(claims.premises === undefined ? {} : { premises: claims.premises }),
    ...(claims.conditions === undefined ? {} : { conditions: claims.conditions }),
    evidence: claims.evidence,
  };
  const disclosable = ["licence_number", "licence_type", "holder_name", "premises", "conditions"].filter(
    (claim) => claim in payload,
  );
  const sdjwt = new SDJwtVcInstance({
    signer: context.signer.sign,
    signAlg: "ES256",
    hasher: digest,
    hashAlg: "sha-256",
    saltGenerator: generateSalt,
  });
  return sdjwt.issue(payload, { _sd: disclosable } as Parameters<SDJwtVcInstance["issue"]>[1], {
    header: { kid: issuer.kid },
  });
}

/**
 * The credential of a request's licence for whoever may see the request (its applicant, or a client acting for the
 * applicant): 404 as for the request's detail otherwise.
 */
export async function holderCredential(
  context: CredentialContext,
  principal: Principal | undefined,
  requestId: string,
  format: CredentialFormat,
  holderKey?: string,
): Promise<string> {
  if (holderKey !== undefined && format !== "dc+sd-jwt")
    throw validationFailed("holderKey binds a dc+sd-jwt credential only", { field: "holderKey" });
  const key = holderKey === undefined ? undefined : holderPublicKey(holderKey);
  const request = await findVisibleRequest(context.pool, principal, requestId);
  return issueCredential(context, await licenceClaims(context, request), format, key);
}

/** A holder's public JWK given as base64url JSON; a private key, or anything else, is 400. */
export function holderPublicKey(encoded: string): JsonWebKey {
  let jwk: unknown;
  try {
    jwk = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"));
    createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
  } catch {
    throw validationFailed("holderKey is not a base64url-encoded public JWK", { field: "holderKey" });
  }
  if (typeof jwk !== "object" || jwk === null || "d" in jwk)
    throw validationFailed("holderKey must be a public key (a JWK without private parts)", { field: "holderKey" });
  return jwk as JsonWebKey;
}

/** SD-JWT VC type metadata of the licence (what `vct` resolves to): its claims and which are disclosable. */
export function licenceTypeMetadata(publicBaseUrl: string) {
  const claim = (name: string, label: string, sd: "always" | "never") => ({
    path: [name],
    sd,
    display: [{ locale: "en", label }],
  });
  return {
    vct: `${publicBaseUrl}${LICENCE_VCT_PATH}`,
    name: "Licence",
    description:
      "A licence issued after the departments of its workflow approved it on chain; its status is the chain's, through the Token Status List.",
    claims: [
      claim("licence_number", "Licence number", "always"),
      claim("licence_type", "Licence type", "always"),
      claim("holder_name", "Holder", "always"),
      claim("premises", "Premises", "always"),
      claim("conditions", "Conditions", "always"),
      claim("evidence", "Approvals and documents", "never"),
    ],
  };
}
