/**
 * Service access tokens (RFC 9068-style JWTs, header `typ: at+jwt`, ES256, `kid`). Claims:
 *
 * | claim     | applicant token                          | client token                              |
 * |-----------|------------------------------------------|-------------------------------------------|
 * | iss       | JWT_ISSUER (default PUBLIC_BASE_URL)      | same                                      |
 * | aud       | licence-approval-api                     | same                                      |
 * | sub       | identity-locker id of the applicant      | client id                                 |
 * | iat, exp  | issue time, + ACCESS_TOKEN_TTL_SECONDS   | same                                      |
 * | jti       | random UUID                              | same                                      |
 * | kind      | "applicant"                              | "client"                                  |
 * | name,email| from the identity provider, when known  | -                                         |
 * | idp       | "development" or "identity-locker"       | -                                         |
 * | client_id | -                                        | the client id (RFC 9068)                  |
 * | scope     | -                                        | granted scopes, space separated; `admin` = administrator |
 */
import { randomUUID } from "node:crypto";
import { createLocalJWKSet, errors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { SCOPES, type Principal, type Scope } from "./principal.ts";
import { JWT_ALGORITHM, type SigningKey } from "./keys.ts";

export const TOKEN_TYPE = "at+jwt";

export type IdentityProviderKind = "development" | "identity-locker";

export interface ApplicantIdentity {
  id: string;
  name?: string;
  email?: string;
  idp: IdentityProviderKind;
}

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  claims: JWTPayload;
}

export interface VerifiedToken {
  principal: Principal;
  claims: JWTPayload;
}

/** Why a token was refused: the message is safe to show (it never echoes the token). */
export class TokenRejected extends Error {}

export interface TokenOptions {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  /**
   * Whether applicant tokens of the passwordless development provider (`idp: "development"`) are accepted: only by a
   * process that runs that provider itself. Another environment sharing the signing key and issuer
   * (a development or staging stack) cannot mint applicant tokens a production process accepts.
   */
  developmentIdentities?: boolean;
}

/** Verified tokens kept (each until its expiry); the map is emptied when it reaches this size. */
const VERIFIED_CACHE_MAX = 10_000;

export class TokenService {
  private readonly jwks: ReturnType<typeof createLocalJWKSet>;
  readonly #verified = new Map<string, VerifiedToken>();
  private readonly key: SigningKey;
  private readonly options: TokenOptions;

  constructor(key: SigningKey, options: TokenOptions) {
    this.key = key;
    this.options = options;
    this.jwks = createLocalJWKSet({ keys: [key.publicJwk] });
  }

  get jwksDocument(): { keys: SigningKey["publicJwk"][] } {
    return { keys: [this.key.publicJwk] };
  }

  issueApplicant(identity: ApplicantIdentity): Promise<IssuedToken> {
    const claims: JWTPayload = { kind: "applicant", idp: identity.idp };
    if (identity.name) claims.name = identity.name;
    if (identity.email) claims.email = identity.email;
    return this.sign(identity.id, claims);
  }

  issueClient(clientId: string, scopes: Scope[]): Promise<IssuedToken> {
    return this.sign(clientId, { kind: "client", client_id: clientId, scope: scopes.join(" ") });
  }

  private async sign(subject: string, extra: JWTPayload): Promise<IssuedToken> {
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      ...extra,
      iss: this.options.issuer,
      aud: this.options.audience,
      sub: subject,
      iat: now,
      exp: now + this.options.ttlSeconds,
      jti: randomUUID(),
    };
    const accessToken = await new SignJWT(claims)
      .setProtectedHeader({ alg: JWT_ALGORITHM, typ: TOKEN_TYPE, kid: this.key.kid })
      .sign(this.key.privateKey);
    return { accessToken, expiresIn: this.options.ttlSeconds, claims };
  }

  /** Verifies signature, algorithm, type, issuer, audience and expiry; throws TokenRejected with the reason. */
  async verify(token: string): Promise<VerifiedToken> {
    // A token whose signature and claims checked out stays good until it expires (the key does not change while the
    // process runs); the signature check is the costliest step of an authenticated read. Revocation of a client is
    // checked by the caller on every request, not here.
    const known = this.#verified.get(token);
    if (known && known.claims.exp! * 1000 > Date.now()) return known;
    if (known) this.#verified.delete(token);
    if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw new TokenRejected("The access token is malformed");
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, this.jwks, {
        algorithms: [JWT_ALGORITHM],
        issuer: this.options.issuer,
        audience: this.options.audience,
        typ: TOKEN_TYPE,
        requiredClaims: ["sub", "iat", "exp", "jti"],
      }));
    } catch (error) {
      throw new TokenRejected(reasonOf(error));
    }
    if (claims.kind === "applicant" && claims.idp === "development" && !this.options.developmentIdentities)
      throw new TokenRejected(
        "The access token comes from the development sign-in, which this service does not accept",
      );
    const verified = { principal: principalOf(claims), claims };
    if (this.#verified.size >= VERIFIED_CACHE_MAX) this.#verified.clear();
    this.#verified.set(token, verified);
    return verified;
  }
}

const CLAIM_REASONS: Record<string, string> = {
  iss: "The access token was issued by another issuer",
  aud: "The access token is meant for another audience",
  typ: "The token is not an access token of this service",
};

function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "The access token has expired";
  if (error instanceof errors.JWTClaimValidationFailed)
    return (
      CLAIM_REASONS[error.claim] ??
      (error.reason === "missing"
        ? `The access token lacks the "${error.claim}" claim`
        : `The access token's "${error.claim}" claim is invalid`)
    );
  if (error instanceof errors.JWSSignatureVerificationFailed) return "The access token's signature is invalid";
  if (error instanceof errors.JWKSNoMatchingKey) return "The access token was not signed with this service's key";
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return "The access token's signing algorithm is not accepted (ES256 only)";
  return "The access token is malformed";
}

function principalOf(claims: JWTPayload): Principal {
  const sub = claims.sub!;
  if (claims.kind === "applicant") {
    const principal: Principal = { kind: "applicant", id: sub };
    if (typeof claims.name === "string") principal.name = claims.name;
    if (typeof claims.email === "string") principal.email = claims.email;
    return principal;
  }
  if (claims.kind === "client" && typeof claims.scope === "string") {
    const scopes = claims.scope.split(" ").filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
    return { kind: "client", id: sub, scopes };
  }
  throw new TokenRejected('The access token\'s "kind" claim is invalid');
}
