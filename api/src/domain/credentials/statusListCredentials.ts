/**
 * The signed status lists, built on each request from the index's licence statuses (buildStatusLists): the W3C
 * revocation and suspension lists as BitstringStatusListCredentials (vc+jwt), and the IETF Token Status List as a
 * statuslist+jwt. Every list number up to the highest in use answers, all zeros when none of its licences is
 * suspended or revoked, so fetching a list says nothing about which licence is checked; beyond it, 404.
 */
import { deflateSync, gzipSync } from "node:zlib";
import type { StatusListJWTPayload } from "@sd-jwt/jwt-status-list";
import type { DbPool } from "../../db/queryable.ts";
import { highestTokenId } from "../../reads/credentialReads.ts";
import { statusListEntries } from "../../reads/statusListReads.ts";
import type { DomainContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { issuerIdentity } from "./issuerIdentity.ts";
import { buildStatusLists, STATUS_LIST_SIZE, statusPosition, type StatusListKind } from "./statusLists.ts";

export const STATUS_LIST_KINDS = ["revocation", "suspension", "token-status"] as const satisfies StatusListKind[];

/** How long a verifier may cache a list (seconds): a suspension reaches verifiers within this. */
export const STATUS_LIST_TTL_SECONDS = 60;

export const MEDIA_TYPES = {
  vcJwt: "application/vc+jwt",
  statusListJwt: "application/statuslist+jwt",
} as const;

/** Where list number `list` of `kind` is served (the URL convention shared with the chain anchoring). */
export function statusListUrl(publicBaseUrl: string, list: number, kind: StatusListKind): string {
  return `${publicBaseUrl}/credentials/status/${list}/${kind}`;
}

/** The compact signed list: a vc+jwt for revocation and suspension, a statuslist+jwt for token-status. */
export async function signedStatusList(
  context: Pick<DomainContext, "pool" | "credentialSigner" | "config">,
  list: number,
  kind: StatusListKind,
): Promise<{ token: string; mediaType: string }> {
  const bits = await statusListBits(context.pool, list);
  const base = context.config.publicBaseUrl!;
  const url = statusListUrl(base, list, kind);
  const issuer = issuerIdentity(base);
  const now = Math.floor(Date.now() / 1000);
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  if (kind === "token-status") {
    const payload: StatusListJWTPayload = {
      iss: issuer.did,
      sub: url,
      iat: now,
      // A hard limit for a stale copy; ttl asks verifiers to fetch again much sooner.
      exp: now + 3600,
      ttl: STATUS_LIST_TTL_SECONDS,
      status_list: { bits: 2, lst: tokenStatusLst(bits.tokenStatus) },
    };
    const token = await context.credentialSigner.signJws({ typ: "statuslist+jwt", kid: issuer.kid }, json(payload));
    return { token, mediaType: MEDIA_TYPES.statusListJwt };
  }
  const credential = {
    "@context": ["https://www.w3.org/ns/credentials/v2"],
    id: url,
    type: ["VerifiableCredential", "BitstringStatusListCredential"],
    issuer: issuer.did,
    validFrom: new Date(now * 1000).toISOString(),
    credentialSubject: {
      id: `${url}#list`,
      type: "BitstringStatusList",
      statusPurpose: kind,
      encodedList: encodedList(bits[kind]),
      ttl: STATUS_LIST_TTL_SECONDS * 1000,
    },
  };
  const token = await context.credentialSigner.signJws({ typ: "vc+jwt", kid: issuer.kid }, json(credential));
  return { token, mediaType: MEDIA_TYPES.vcJwt };
}

/** A W3C list's encodedList: multibase base64url ('u', no padding) of the GZIP-compressed bitstring. */
export function encodedList(bits: Uint8Array): string {
  return `u${gzipSync(bits).toString("base64url")}`;
}

/** A Token Status List's `lst`: base64url of the ZLIB-wrapped DEFLATE of the 2-bit entries (the IETF format). */
export function tokenStatusLst(bits: Uint8Array): string {
  return deflateSync(bits, { level: 9 }).toString("base64url");
}

/** The decoded lists of list number `list`; 404 beyond the highest list a minted token falls in. */
export async function statusListBits(pool: DbPool, list: number) {
  const highest = await highestTokenId(pool);
  if (highest === undefined || list > statusPosition(highest).list) throw notFound("Status list");
  return buildStatusLists(list, await statusListEntries(pool, list, STATUS_LIST_SIZE));
}
