/** The chain and the index count time in Unix seconds; the API answers with Dates and ISO 8601 strings. */

/** Seconds as the chain (bigint), the index (a numeric column: string or number) or a job payload give them. */
export type UnixSeconds = number | bigint | string;

export function dateFromUnixSeconds(seconds: UnixSeconds): Date {
  return new Date(Number(seconds) * 1000);
}

export function isoFromUnixSeconds(seconds: UnixSeconds): string {
  return dateFromUnixSeconds(seconds).toISOString();
}
