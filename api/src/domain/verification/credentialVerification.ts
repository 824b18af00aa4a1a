/**
 * Verifying a presented licence credential: a vc+jwt, or an SD-JWT VC as a wallet presents it (issuer JWT ~
 * disclosures ~ optional key-binding JWT). The credential is checked first, in this order, and the first check that
 * fails gives verdict INVALID_CREDENTIAL with `credential.reason`:
 *   MALFORMED (not a compact JWS / SD-JWT of either format) → UNKNOWN_ISSUER (iss, issuer or kid not our did:web) →
 *   BAD_SIGNATURE (not signed by the key our DID document publishes) → NOT_A_LICENCE (signed by us, but not a
 *   licence credential of this chain and contract) → TAMPERED (a disclosure no signed digest names) → KEY_BINDING
 *   (a key-binding JWT not signed by the cnf key, or not over this presentation) → NOT_YET_VALID (before validFrom).
 * Then the status lists answer for the token it names (our own lists, read in-process) and the chain decides, as for
 * GET /verify/{tokenId}: its verdict is the answer, except that a credential past its validUntil is EXPIRED whatever
 * the chain's clock says yet. A credential that fails a check is never VALID.
 */
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from "jose";
import { digest, ES256 } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import type { DomainContext } from "../context.ts";
import { didDocument, issuerIdentity } from "../credentials/issuerIdentity.ts";
import { LICENCE_VCT_PATH, TOKEN_STATUS_ENTRY_TYPE } from "../credentials/licenceCredential.ts";
import { signedStatusList, statusListBits, statusListUrl } from "../credentials/statusListCredentials.ts";
import { STATUS_LIST_SIZE, statusPosition } from "../credentials/statusLists.ts";
import {
  unnamedLicence,
  verifyLicence,
  type LicenceVerification,
  type VerificationDependencies,
} from "./licenceVerification.ts";
import { licenceMessage } from "./verdicts.ts";

export const CREDENTIAL_PROBLEMS = [
  "MALFORMED",
  "UNKNOWN_ISSUER",
  "BAD_SIGNATURE",
  "NOT_A_LICENCE",
  "TAMPERED",
  "KEY_BINDING",
  "NOT_YET_VALID",
] as const;
export type CredentialProblem = (typeof CREDENTIAL_PROBLEMS)[number];

const PROBLEM_MESSAGES: Record<CredentialProblem, string> = {
  MALFORMED: "This is not a licence credential (a vc+jwt or an SD-JWT VC).",
  UNKNOWN_ISSUER: "This credential names another issuer than the licence platform.",
  BAD_SIGNATURE: "The credential's signature is not the licence platform's: it was forged or altered.",
  TAMPERED: "A disclosed claim was altered: it matches none of the digests the platform signed.",
  NOT_A_LICENCE: "The platform signed this, but it is not a licence credential of this platform's chain.",
  KEY_BINDING: "The presentation's key binding is not signed by the holder's key, or not over this presentation.",
  NOT_YET_VALID: "This credential is not valid yet.",
};

export interface CredentialReport {
  format: "vc+jwt" | "dc+sd-jwt" | null;
  issuer: string | null;
  signatureValid: boolean;
  reason: CredentialProblem | null;
  status: {
    list: number;
    index: number;
    revocation: number | null;
    suspension: number | null;
    tokenStatus: number | null;
  } | null;
  validFrom: string | null;
  validUntil: string | null;
  withinValidity: boolean | null;
  disclosed: Record<string, unknown>;
  keyBinding: { aud: unknown; nonce: unknown; iat: unknown } | null;
}

export type CredentialVerification = Omit<LicenceVerification, "verdict" | "tokenId" | "status"> & {
  verdict: LicenceVerification["verdict"] | "INVALID_CREDENTIAL";
  tokenId: number | null;
  status: string | null;
  credential: CredentialReport;
};

export interface CredentialVerificationContext {
  licences: VerificationDependencies;
  /** The issuer's key and URL and the pool the status lists are built from, read when a credential is checked. */
  service: Pick<DomainContext, "pool" | "credentialSigner" | "config" | "gateway">;
}

class Refused extends Error {
  readonly reason: CredentialProblem;
  readonly report: Partial<CredentialReport>;
  constructor(reason: CredentialProblem, report: Partial<CredentialReport> = {}) {
    super(reason);
    this.reason = reason;
    this.report = report;
  }
}

const EMPTY: CredentialReport = {
  format: null,
  issuer: null,
  signatureValid: false,
  reason: null,
  status: null,
  validFrom: null,
  validUntil: null,
  withinValidity: null,
  disclosed: {},
  keyBinding: null,
};

export async function verifyCredential(
  context: CredentialVerificationContext,
  presented: string,
): Promise<CredentialVerification> {
  let checked: Checked;
  try {
    // Base64url, dots and tildes only: line breaks and spaces a paste picked up are not part of it.
    checked = await checkCredential(context, presented.replace(/\s+/g, ""));
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return refused({ ...EMPTY, ...error.report, reason: error.reason });
  }
  const { tokenId, report } = checked;
  const licence = await verifyLicence(context.licences, tokenId);
  const expired = report.withinValidity === false;
  const verdict = expired ? "EXPIRED" : licence.verdict;
  return {
    ...licence,
    isValid: verdict === "VALID",
    verdict,
    message: expired ? licenceMessage("EXPIRED", { expiresAt: new Date(report.validUntil!) }) : licence.message,
    credential: report,
  };
}

function refused(report: CredentialReport): CredentialVerification {
  const message = `${licenceMessage("INVALID_CREDENTIAL")} ${PROBLEM_MESSAGES[report.reason!]}`;
  return { ...unnamedLicence("INVALID_CREDENTIAL", message), credential: report };
}

interface Checked {
  tokenId: bigint;
  report: CredentialReport;
}

async function checkCredential(context: CredentialVerificationContext, presented: string): Promise<Checked> {
  const sdJwt = presented.includes("~");
  const issuerJwt = presented.split("~")[0];
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: Record<string, any>;
  try {
    header = decodeProtectedHeader(issuerJwt);
    claims = decodeJwt(issuerJwt);
  } catch {
    throw new Refused("MALFORMED");
  }
  const format = sdJwt ? "dc+sd-jwt" : "vc+jwt";
  if (header.typ !== format) throw new Refused("MALFORMED");
  const { did, kid } = issuerIdentity(context.service.config.publicBaseUrl!);
  const named = format === "vc+jwt" ? (claims.issuer?.id ?? claims.issuer) : claims.iss;
  const issuer = typeof named === "string" ? named : null;
  let report: CredentialReport = { ...EMPTY, format, issuer };
  if (issuer !== did || (claims.iss !== undefined && claims.iss !== did) || (header.kid && header.kid !== kid))
    throw new Refused("UNKNOWN_ISSUER", report);

  // Our DID document, resolved in-process: the key its assertion method names.
  const document = didDocument({ did, kid }, context.service.credentialSigner.publicJwk);
  const method = document.verificationMethod.find((m) => document.assertionMethod.includes(m.id));
  const key = await importJWK(method!.publicKeyJwk as JWK, "ES256");
  try {
    await compactVerify(issuerJwt, key, { algorithms: ["ES256"] });
  } catch {
    throw new Refused("BAD_SIGNATURE", report);
  }
  report = { ...report, signatureValid: true };
  const checked =
    format === "vc+jwt"
      ? await checkVcJwt(context, claims, report)
      : await checkSdJwt(context, presented, claims, report);
  const now = Date.now();
  const { validFrom, validUntil } = checked.report;
  // validFrom is the chain's issuance time: judged by the later of our clock and the chain's, which issued it (the
  // chain is asked only when our clock says not yet).
  const notBefore = validFrom ? Date.parse(validFrom) : undefined;
  if (
    notBefore !== undefined &&
    now < notBefore &&
    1000 * (await context.service.gateway.latestBlockTime()) < notBefore
  )
    throw new Refused("NOT_YET_VALID", { ...checked.report, withinValidity: false });
  return {
    ...checked,
    report: { ...checked.report, withinValidity: !validUntil || now <= Date.parse(validUntil) },
  };
}

const isoOfSeconds = (seconds: unknown) =>
  typeof seconds === "number" ? new Date(seconds * 1000).toISOString() : null;

async function checkVcJwt(
  context: CredentialVerificationContext,
  vc: Record<string, any>,
  report: CredentialReport,
): Promise<Checked> {
  const { chainId, contracts } = context.licences;
  const entry = Array.isArray(vc.credentialStatus)
    ? vc.credentialStatus.find((s: any) => s?.type === TOKEN_STATUS_ENTRY_TYPE)
    : undefined;
  const ours =
    Array.isArray(vc.type) &&
    vc.type.includes("LicenceCredential") &&
    entry?.chainId === chainId &&
    String(entry?.contractAddress).toLowerCase() === contracts.LicenceToken.toLowerCase() &&
    /^\d{1,13}$/.test(String(entry?.tokenId));
  if (!ours) throw new Refused("NOT_A_LICENCE", report);
  const tokenId = BigInt(entry.tokenId);
  const { list, index } = statusPosition(tokenId);
  const bits = await statusListBits(context.service.pool, list);
  const bit = (bytes: Uint8Array) => (bytes[index >> 3] >> (7 - (index % 8))) & 1;
  return {
    tokenId,
    report: {
      ...report,
      status: { list, index, revocation: bit(bits.revocation), suspension: bit(bits.suspension), tokenStatus: null },
      validFrom: typeof vc.validFrom === "string" ? vc.validFrom : isoOfSeconds(vc.nbf),
      validUntil: typeof vc.validUntil === "string" ? vc.validUntil : isoOfSeconds(vc.exp),
      // A vc+jwt withholds nothing: its subject is disclosed whole.
      disclosed: { ...vc.credentialSubject },
    },
  };
}

async function checkSdJwt(
  context: CredentialVerificationContext,
  presented: string,
  signed: Record<string, any>,
  report: CredentialReport,
): Promise<Checked> {
  const publicBaseUrl = context.service.config.publicBaseUrl!;
  const reference = signed.status?.status_list;
  const list = Number(/\/credentials\/status\/(\d+)\/token-status$/.exec(String(reference?.uri))?.[1] ?? Number.NaN);
  const ours =
    signed.vct === `${publicBaseUrl}${LICENCE_VCT_PATH}` &&
    Number.isSafeInteger(list) &&
    reference.uri === statusListUrl(publicBaseUrl, list, "token-status") &&
    Number.isInteger(reference.idx) &&
    reference.idx >= 0 &&
    reference.idx < STATUS_LIST_SIZE;
  if (!ours) throw new Refused("NOT_A_LICENCE", report);
  const index: number = reference.idx;
  let tokenStatus: number | null = null;
  const sdjwt = new SDJwtVcInstance({
    verifier: await ES256.getVerifier(context.service.credentialSigner.publicJwk),
    kbVerifier: async (data, signature, payload) =>
      (await ES256.getVerifier((payload.cnf as { jwk: JsonWebKey }).jwk))(data, signature),
    hasher: digest,
    hashAlg: "sha-256",
    // Our own Token Status List, signed and read in-process; the library checks its signature and reads the entry.
    statusListFetcher: async () => (await signedStatusList(context.service, list, "token-status")).token,
    statusValidator: async (status) => {
      tokenStatus = status;
    },
  });
  let decoded: Awaited<ReturnType<SDJwtVcInstance["decode"]>>;
  try {
    decoded = await sdjwt.decode(presented);
  } catch {
    throw new Refused("MALFORMED", report);
  }
  // The library ignores a disclosure that no digest names; a presentation carrying one was altered.
  const named = digestsNamed(signed);
  const hash = { hasher: digest, alg: "sha-256" };
  for (const disclosure of decoded.disclosures ?? [])
    if (!named.has(await disclosure.digest(hash))) throw new Refused("TAMPERED", report);
  const kb = decoded.kbJwt?.payload;
  if (decoded.kbJwt && (!signed.cnf?.jwk || typeof kb?.nonce !== "string")) throw new Refused("KEY_BINDING", report);
  let payload: Record<string, unknown>;
  try {
    // Times are ours to judge (below, to tell EXPIRED from forged): the library checks signature and digests only.
    ({ payload } = await sdjwt.verify(presented, {
      skewSeconds: Number.MAX_SAFE_INTEGER,
      ...(kb ? { keyBindingNonce: kb.nonce as string } : {}),
    }));
  } catch {
    throw new Refused(decoded.kbJwt ? "KEY_BINDING" : "TAMPERED", report);
  }
  const disclosed = Object.fromEntries(Object.entries(payload).filter(([name]) => !(name in signed)));
  return {
    tokenId: BigInt(list) * BigInt(STATUS_LIST_SIZE) + BigInt(index),
    report: {
      ...report,
      status: { list, index, revocation: null, suspension: null, tokenStatus },
      validFrom: isoOfSeconds(signed.nbf),
      validUntil: isoOfSeconds(signed.exp),
      disclosed,
      keyBinding: kb ? { aud: kb.aud ?? null, nonce: kb.nonce, iat: kb.iat ?? null } : null,
    },
  };
}

/** Every digest the issuer signed: the `_sd` arrays of the payload and its objects, and `{"...": digest}` items. */
function digestsNamed(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) digestsNamed(item, into);
  else if (value && typeof value === "object") {
    for (const [name, inner] of Object.entries(value)) {
      if (name === "_sd" && Array.isArray(inner)) inner.forEach((d) => typeof d === "string" && into.add(d));
      else if (name === "..." && typeof inner === "string") into.add(inner);
      else digestsNamed(inner, into);
    }
  }
  return into;
}
