/**
 * Delivery of the licence credential by OpenID for Verifiable Credential Issuance 1.0, pre-authorized code flow:
 * the applicant (or the holder, by the holder proof) asks for an offer, a wallet redeems its code once at the token
 * endpoint for a short-lived access token, takes a c_nonce, and asks for the credential with a proof of its key, to
 * which the credential is bound.
 * The protocol messages are @openid4vc/openid4vci's and @openid4vc/oauth2's; keys, storage and credentials ours.
 * This service is its own authorization server: one origin, PUBLIC_BASE_URL, for both metadata documents.
 */
import { createHash, randomBytes, randomUUID, type JsonWebKey } from "node:crypto";
import {
  clientAuthenticationAnonymous,
  decodeJwt,
  Oauth2AuthorizationServer,
  Oauth2ErrorCodes,
  Oauth2JwtVerificationError,
  Oauth2ServerErrorResponseError,
  preAuthorizedCodeGrantIdentifier,
  setGlobalConfig,
  type AuthorizationServerMetadata,
  type CallbackContext,
  type Jwk,
  type RequestLike,
} from "@openid4vc/oauth2";
import {
  Openid4vciIssuer,
  Openid4vciVersion,
  type CredentialIssuerMetadata,
  type IssuerMetadataResult,
} from "@openid4vc/openid4vci";
import { compactVerify, importJWK, jwtVerify } from "jose";
import type { Principal } from "../../auth/principal.ts";
import { credentialOfferRequest, pendingCredentialOffer } from "../../reads/credentialReads.ts";
import { findRequest, findRequestByToken, type RequestView } from "../../reads/requestReads.ts";
import {
  insertCredentialNonce,
  insertCredentialOffer,
  redeemCredentialOffer,
  spendCredentialNonce,
} from "../../stores/credentialOfferStore.ts";
import { findVisibleRequest } from "../access.ts";
import type { DomainContext } from "../context.ts";
import { AppError, notFound } from "../errors.ts";
import { checkHolder } from "../requests/holderProof.ts";
import { qrSvg } from "../verification/qrImage.ts";
import { didKeyToJwk, UnsupportedHolderKey } from "./holderKeys.ts";
import { issuerIdentity } from "./issuerIdentity.ts";
import {
  issueCredential,
  licenceClaims,
  LICENCE_VCT_PATH,
  type CredentialContext,
  type CredentialFormat,
} from "./licenceCredential.ts";

/** An offer's pre-authorized code is redeemable this long after the offer is made. */
export const OFFER_TTL_SECONDS = 600;
/** The access token the code is exchanged for: long enough to ask for both formats. */
export const ACCESS_TOKEN_TTL_SECONDS = 300;
export const NONCE_TTL_SECONDS = 300;

export const OID4VCI_PATHS = {
  token: "/oid4vci/token",
  nonce: "/oid4vci/nonce",
  credential: "/oid4vci/credential",
  offer: "/oid4vci/credential-offer",
} as const;

/** The credential_configuration_id of each format (jwt_vc_json is OID4VCI's name for a W3C VC signed as a JWT). */
export const CREDENTIAL_CONFIGURATIONS: Record<string, CredentialFormat> = {
  licence_dc_sd_jwt: "dc+sd-jwt",
  licence_jwt_vc_json: "vc+jwt",
};

const sha256 = (text: string) => createHash("sha256").update(text).digest();

const error = (code: Oauth2ErrorCodes, description: string, status = 400) =>
  new Oauth2ServerErrorResponseError({ error: code, error_description: description }, { status });

export interface Oid4vci {
  issuerMetadata: CredentialIssuerMetadata;
  authorizationServerMetadata: AuthorizationServerMetadata;
  offer(principal: Principal | undefined, requestId: string): Promise<CredentialOffer>;
  /** An offer of the request's licence to a caller already shown to be its holder (409 unless it stands). */
  offerOf(request: RequestView): Promise<CredentialOffer>;
  offerByReference(code: string): Promise<Record<string, unknown>>;
  token(request: RequestLike, body: Record<string, unknown>): Promise<Record<string, unknown>>;
  nonce(): Promise<Record<string, unknown>>;
  credential(authorization: string | undefined, body: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export interface CredentialOffer {
  credentialOffer: Record<string, unknown>;
  /** openid-credential-offer:// with the offer by value. */
  credentialOfferUri: string;
  /** Where the offer is served (credential_offer_uri) and the openid-credential-offer:// URI naming it. */
  credentialOfferReference: string;
  credentialOfferReferenceUri: string;
  /** A QR code (SVG) of the by-reference URI. */
  qrSvg: string;
  expiresAt: string;
}

export function oid4vci(context: CredentialContext): Oid4vci {
  const base = context.publicBaseUrl;
  // The library accepts only https URLs unless told otherwise; PUBLIC_BASE_URL is https in production (config.ts).
  setGlobalConfig({ allowInsecureUrls: base.startsWith("http://") });
  const { kid } = issuerIdentity(base);
  const publicJwk = context.signer.publicJwk;
  const callbacks: Omit<CallbackContext, "decryptJwe" | "encryptJwe"> = {
    hash: (data, alg) => createHash(alg.replace("-", "")).update(data).digest(),
    generateRandom: (bytes) => randomBytes(bytes),
    clientAuthentication: clientAuthenticationAnonymous(),
    // Only our access tokens are signed through the library, with the issuer's key.
    signJwt: async (_signer, { header, payload }) => {
      const { alg: _alg, jwk: _jwk, ...rest } = header;
      const jwt = await context.signer.signJws({ ...rest, kid }, new TextEncoder().encode(JSON.stringify(payload)));
      return { jwt, signerJwk: publicJwk as never };
    },
    // Wallet proofs name their key in the header: as a jwk, or by a did:jwk or did:key kid resolved here. Other
    // key references are refused.
    verifyJwt: async (signer, { compact }) => {
      if (signer.alg !== "ES256" || (signer.method !== "jwk" && signer.method !== "did")) return { verified: false };
      let jwk: Jwk;
      try {
        jwk = signer.method === "jwk" ? signer.publicJwk : didKeyToJwk(signer.didUrl);
      } catch (cause) {
        if (cause instanceof UnsupportedHolderKey) throw new Oauth2JwtVerificationError(cause.message);
        throw cause;
      }
      try {
        await compactVerify(compact, await importJWK(jwk as JsonWebKey, "ES256"));
        return { verified: true, signerJwk: jwk };
      } catch {
        return { verified: false };
      }
    },
  };
  const issuer = new Openid4vciIssuer({ callbacks });
  const server = new Oauth2AuthorizationServer({ callbacks });

  const binding = {
    cryptographic_binding_methods_supported: ["jwk", "did:jwk", "did:key"],
    credential_signing_alg_values_supported: ["ES256"],
    proof_types_supported: { jwt: { proof_signing_alg_values_supported: ["ES256"] } },
  };
  const display = (description: string) => ({
    credential_metadata: { display: [{ name: "Licence", locale: "en", description }] },
  });
  const issuerMetadata = issuer.createCredentialIssuerMetadata({
    credential_issuer: base,
    credential_endpoint: `${base}${OID4VCI_PATHS.credential}`,
    nonce_endpoint: `${base}${OID4VCI_PATHS.nonce}`,
    display: [{ name: "Licence Approval Service", locale: "en" }],
    credential_configurations_supported: {
      licence_dc_sd_jwt: {
        format: "dc+sd-jwt",
        vct: `${base}${LICENCE_VCT_PATH}`,
        ...binding,
        ...display("The licence as an SD-JWT VC: number, type, holder, premises and conditions each disclosable"),
      },
      licence_jwt_vc_json: {
        format: "jwt_vc_json",
        credential_definition: { type: ["VerifiableCredential", "LicenceCredential"] },
        ...binding,
        ...display("The licence as a W3C VC 2.0 signed as a JWT (vc+jwt), without the holder's name"),
      },
    },
  });
  const authorizationServerMetadata = server.createAuthorizationServerMetadata({
    issuer: base,
    token_endpoint: `${base}${OID4VCI_PATHS.token}`,
    grant_types_supported: [preAuthorizedCodeGrantIdentifier],
    token_endpoint_auth_methods_supported: ["none"],
    "pre-authorized_grant_anonymous_access_supported": true,
  });
  const metadata: IssuerMetadataResult = {
    originalDraftVersion: Openid4vciVersion.V1,
    credentialIssuer: issuerMetadata,
    authorizationServers: [authorizationServerMetadata],
    knownCredentialConfigurations: issuer.getKnownCredentialConfigurationsSupported(issuerMetadata),
  };
  const offerObject = async (code: string) =>
    issuer.createCredentialOffer({
      issuerMetadata: metadata,
      credentialConfigurationIds: Object.keys(CREDENTIAL_CONFIGURATIONS),
      grants: { [preAuthorizedCodeGrantIdentifier]: { "pre-authorized_code": code } },
    });

  /**
   * Only while the licence stands (409 as the download). The code is random (256 bits), stored hashed, redeemable
   * once.
   */
  async function offerOf(request: RequestView): Promise<CredentialOffer> {
    await licenceClaims(context, request);
    const code = randomBytes(32).toString("base64url");
    const expiresAt = new Date(Date.now() + OFFER_TTL_SECONDS * 1000);
    const row = { id: randomUUID(), requestId: request.id, codeHash: sha256(code), expiresAt };
    await insertCredentialOffer(context.pool, row);
    const { credentialOffer, credentialOfferObject } = await offerObject(code);
    const reference = `${base}${OID4VCI_PATHS.offer}/${code}`;
    const referenceUri = `openid-credential-offer://?${new URLSearchParams({ credential_offer_uri: reference })}`;
    return {
      credentialOffer: credentialOfferObject,
      credentialOfferUri: credentialOffer,
      credentialOfferReference: reference,
      credentialOfferReferenceUri: referenceUri,
      qrSvg: await qrSvg(referenceUri),
      expiresAt: expiresAt.toISOString(),
    };
  }

  return {
    issuerMetadata,
    authorizationServerMetadata,

    /**
     * An offer of the request's licence to whoever may download its credential (404 otherwise), only while the
     * licence stands (409 as the download).
     */
    async offer(principal, requestId) {
      return offerOf(await findVisibleRequest(context.pool, principal, requestId));
    },
    offerOf,

    /** The offer behind a credential_offer_uri (whose path is its code): 404 once redeemed or expired. */
    async offerByReference(code) {
      if (!(await pendingCredentialOffer(context.pool, sha256(code)))) throw notFound("Credential offer");
      return (await offerObject(code)).credentialOfferObject;
    },

    /**
     * The token endpoint: a pre-authorized code for an access token (subject: the offer). The code is spent by
     * this request whatever follows, so a second use, even after a failed one, is invalid_grant.
     */
    async token(request, body) {
      const parsed = server.parseAccessTokenRequest({ request, accessTokenRequest: body });
      if (parsed.grant.grantType !== preAuthorizedCodeGrantIdentifier)
        throw error(Oauth2ErrorCodes.UnsupportedGrantType, `Only ${preAuthorizedCodeGrantIdentifier} is supported`);
      const code = parsed.grant.preAuthorizedCode;
      const offer = await redeemCredentialOffer(context.pool, sha256(code));
      if (!offer) throw error(Oauth2ErrorCodes.InvalidGrant, "The pre-authorized code is unknown or already used");
      await server.verifyPreAuthorizedCodeAccessTokenRequest({
        authorizationServerMetadata,
        grant: parsed.grant,
        accessTokenRequest: parsed.accessTokenRequest,
        request,
        expectedPreAuthorizedCode: code,
        preAuthorizedCodeExpiresAt: offer.expiresAt,
      });
      return server.createAccessTokenResponse({
        authorizationServer: base,
        audience: base,
        subject: offer.id,
        expiresInSeconds: ACCESS_TOKEN_TTL_SECONDS,
        signer: { method: "jwk", publicJwk: publicJwk as never, alg: "ES256" },
      });
    },

    async nonce() {
      const nonce = randomBytes(32).toString("base64url");
      await insertCredentialNonce(context.pool, sha256(nonce), new Date(Date.now() + NONCE_TTL_SECONDS * 1000));
      return issuer.createNonceResponse({ cNonce: nonce, cNonceExpiresIn: NONCE_TTL_SECONDS });
    },

    /**
     * The credential endpoint: the access token names the offer, the request names one configuration and carries
     * one jwt proof (aud = this issuer, nonce from the nonce endpoint, spent here), and the credential is bound to
     * the proof's key. The licence must still stand.
     */
    async credential(authorization, body) {
      const offerId = await accessTokenSubject(authorization);
      const requestId = offerId && (await credentialOfferRequest(context.pool, offerId));
      if (!requestId) throw error(Oauth2ErrorCodes.InvalidToken, "The access token is not valid", 401);
      const parsed = issuer.parseCredentialRequest({ issuerMetadata: metadata, credentialRequest: body });
      const format = parsed.credentialConfigurationId && CREDENTIAL_CONFIGURATIONS[parsed.credentialConfigurationId];
      if (!format)
        throw error(Oauth2ErrorCodes.InvalidCredentialRequest, "credential_configuration_id names no configuration");
      const jwts = parsed.proofs?.jwt;
      if (jwts?.length !== 1) throw error(Oauth2ErrorCodes.InvalidProof, "Exactly one jwt proof is required");
      const nonce = proofNonce(jwts[0]);
      const { signer } = await issuer.verifyCredentialRequestJwtProof({
        issuerMetadata: metadata,
        jwt: jwts[0],
        expectedNonce: nonce,
      });
      if (!(await spendCredentialNonce(context.pool, sha256(nonce))))
        throw error(Oauth2ErrorCodes.InvalidNonce, "The proof's nonce is unknown, expired or already used");
      const { kty, crv, x, y } = signer.publicJwk;
      const request = await findRequest(context.pool, requestId);
      let credential: string;
      try {
        credential = await issueCredential(context, await licenceClaims(context, request!), format, { kty, crv, x, y });
      } catch (cause) {
        if (cause instanceof AppError && cause.status === 409)
          throw error(Oauth2ErrorCodes.CredentialRequestDenied, cause.message);
        throw cause;
      }
      return issuer.createCredentialResponse({ credentialRequest: parsed, credentials: [{ credential }] });
    },
  };

  /** The offer an access token of ours names, or undefined for anything else (expired, forged, another kind). */
  async function accessTokenSubject(authorization: string | undefined): Promise<string | undefined> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!token)
      throw error(Oauth2ErrorCodes.InvalidToken, 'Send the access token as "Authorization: Bearer <token>"', 401);
    try {
      const { payload } = await jwtVerify(token, await importJWK(publicJwk as never, "ES256"), {
        issuer: base,
        audience: base,
        typ: "at+jwt",
        algorithms: ["ES256"],
      });
      return payload.sub;
    } catch {
      return undefined;
    }
  }
}

/** The proof's nonce claim (the proof itself is verified by the library with it as the expected nonce). */
function proofNonce(jwt: string): string {
  let nonce: unknown;
  try {
    nonce = decodeJwt({ jwt }).payload.nonce;
  } catch {
    throw error(Oauth2ErrorCodes.InvalidProof, "The proof is not a JWT");
  }
  if (typeof nonce !== "string" || !nonce)
    throw error(Oauth2ErrorCodes.InvalidProof, "The proof has no nonce: take one from the nonce endpoint");
  return nonce;
}

/** The error code of a holder proof that does not open the commitment (a failed credential for the route). */
export const HOLDER_MISMATCH = "HOLDER_MISMATCH";

/**
 * The holder's offer without a sign-in: whoever opens the licence's on-chain commitment (POST /verify/holder's check)
 * gets the applicant's offer. No such licence is 404 and a pair that does not open it 403, so a stranger learns no
 * more than from that check; then the applicant's 409s. Nothing is stored unless the pair opens the commitment.
 */
export async function holderCredentialOffer(
  context: Pick<DomainContext, "pool" | "gateway" | "contracts">,
  issuance: Pick<Oid4vci, "offerOf">,
  proof: { tokenId: bigint; applicantId: string; salt: string },
): Promise<CredentialOffer> {
  const { matches } = await checkHolder(context, proof.tokenId, proof.applicantId, proof.salt);
  if (!matches)
    throw new AppError(403, HOLDER_MISMATCH, "This identity and salt do not open the licence's on-chain commitment");
  const request = await findRequestByToken(context.pool, proof.tokenId);
  if (!request) throw notFound("Licence");
  return issuance.offerOf(request);
}
