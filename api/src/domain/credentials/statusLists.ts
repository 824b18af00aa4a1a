import { createHash } from "node:crypto";

// Every licence has one fixed place in the status lists, derived from its token id alone, so the lists can be
// rebuilt from the chain by anyone. 131,072 entries per list (16 KiB per bit) is the W3C Bitstring Status List's
// minimum for herd privacy: fetching a list tells the server nothing about which licence is being checked.
export const STATUS_LIST_SIZE = 131_072;

export type StatusListKind = "revocation" | "suspension" | "token-status";

export interface StatusPosition {
  list: number;
  index: number;
}

export function statusPosition(tokenId: bigint): StatusPosition {
  const size = BigInt(STATUS_LIST_SIZE);
  return { list: Number(tokenId / size), index: Number(tokenId % size) };
}

/** What the chain says of one issued licence, as far as the lists are concerned. */
export interface LicenceStatusEntry {
  tokenId: bigint;
  status: "APPROVED" | "SUSPENDED" | "REVOKED" | (string & {});
}

/** IETF Token Status List values (2 bits per entry). */
export const TOKEN_STATUS = { VALID: 0, INVALID: 1, SUSPENDED: 2 } as const;

export interface StatusListBits {
  /** W3C Bitstring Status List, statusPurpose "revocation": 1 bit, index 0 is the left-most bit of byte 0. */
  revocation: Uint8Array;
  /** W3C Bitstring Status List, statusPurpose "suspension": same layout. */
  suspension: Uint8Array;
  /** IETF Token Status List, bits = 2: index 0 is the two least significant bits of byte 0. */
  tokenStatus: Uint8Array;
}

/** The three decoded lists of list number `list`, from the licences whose tokens fall in it. */
export function buildStatusLists(list: number, entries: Iterable<LicenceStatusEntry>): StatusListBits {
  const revocation = new Uint8Array(STATUS_LIST_SIZE / 8);
  const suspension = new Uint8Array(STATUS_LIST_SIZE / 8);
  const tokenStatus = new Uint8Array(STATUS_LIST_SIZE / 4);
  for (const { tokenId, status } of entries) {
    const position = statusPosition(tokenId);
    if (position.list !== list) continue;
    const { index } = position;
    const msbFirst = 0x80 >> (index % 8);
    if (status === "REVOKED") {
      revocation[index >> 3] |= msbFirst;
      tokenStatus[index >> 2] |= TOKEN_STATUS.INVALID << ((index % 4) * 2);
    } else if (status === "SUSPENDED") {
      suspension[index >> 3] |= msbFirst;
      tokenStatus[index >> 2] |= TOKEN_STATUS.SUSPENDED << ((index % 4) * 2);
    }
  }
  return { revocation, suspension, tokenStatus };
}

/** The digest anchored on chain for a list: SHA-256 of its decoded (uncompressed) bytes. */
export function statusListDigest(bits: Uint8Array): `0x${string}` {
  return `0x${createHash("sha256").update(bits).digest("hex")}`;
}
