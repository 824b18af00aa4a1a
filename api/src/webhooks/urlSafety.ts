/**
 * Outbound safety for webhook URLs (SSRF). An allow-list, decided by ipaddr.js rather than hand-written ranges: in
 * production only global unicast addresses (IPv4 `unicast`; IPv6 `unicast` inside 2000::/3), after unwrapping
 * IPv4-mapped IPv6 (so [::ffff:127.0.0.1] is loopback). Development also allows loopback so local receivers work.
 *
 * The name is checked at registration (a clear 400) and again when the socket connects: the delivery agent's
 * `lookup` resolves once, refuses the connection if any address is refused, and hands only checked addresses to
 * the socket, so a name that re-binds between check and connect (TTL 0) cannot reach an internal address.
 * Messages never echo what a name resolved to (no internal DNS oracle).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress } from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { Agent } from "undici";
import { AppError } from "../domain/errors.ts";

export const WEBHOOK_URL_REFUSED = "INVALID_WEBHOOK_URL";
const refuse = (url: string, reason: string) =>
  new AppError(400, WEBHOOK_URL_REFUSED, `Webhook URL refused: ${reason}`, { url: url.slice(0, 300) });

/** Resolves a host name to every address it has (the default is the system resolver, as sockets use). */
export type Resolver = (host: string) => Promise<LookupAddress[]>;
const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface AddressPolicy {
  production: boolean;
  /** Replaces the system resolver (tests: a name that resolves to a chosen address). */
  resolve?: Resolver;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * The one policy of every webhook connection (registration, test delivery, real deliveries): loopback receivers are
 * a development convenience, allowed only where DEV_CONVENIENCES is on and never in production.
 */
export function webhookAddressPolicy(config: {
  nodeEnv: string;
  devConveniences: boolean;
}): Pick<AddressPolicy, "production"> {
  return { production: config.nodeEnv === "production" || !config.devConveniences };
}

/** Whether a webhook may connect to this address. */
export function isAllowedAddress(address: string, policy: Pick<AddressPolicy, "production">): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address); // ::ffff:a.b.c.d → a.b.c.d, whatever its spelling
  const range = ip.range();
  if (!policy.production && range === "loopback") return true;
  if (range !== "unicast") return false;
  return ip.kind() === "ipv4" || (ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

/** Scheme, credentials and (for an address literal) the address itself: everything that needs no DNS. */
export function parseWebhookUrl(
  raw: string,
  policy: Pick<AddressPolicy, "production">,
): { url: URL; host: string; literal: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(raw, "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse(raw, "only http and https are allowed");
  if (url.username || url.password) throw refuse(raw, "credentials in the URL are not allowed");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = net.isIP(host) !== 0;
  if (literal && !isAllowedAddress(host, policy)) throw refuse(raw, "the address is not a public one");
  return { url, host, literal };
}

/** The registration-time check: every address the name has must be allowed. */
export async function checkWebhookUrl(raw: string, policy: AddressPolicy): Promise<URL> {
  const { url, host, literal } = parseWebhookUrl(raw, policy);
  if (literal) return url;
  const addresses = await (policy.resolve ?? systemResolver)(host).catch(() => []);
  if (addresses.length === 0) throw refuse(raw, `host ${host} does not resolve`);
  if (!addresses.every((a) => isAllowedAddress(a.address, policy)))
    throw refuse(raw, `${host} is not a public address`);
  return url;
}

/** Raised inside the socket's lookup when the name resolves to a refused address; delivery reports it as refused. */
export class RefusedAddressError extends Error {
  readonly code = "EWEBHOOKREFUSED";
  constructor(host: string) {
    super(`webhook target ${host} is not a public address`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici agent whose sockets connect only to checked addresses: one resolution per connection, every address
 * checked, the connection refused if any is refused. (Address literals skip `lookup` in net.connect: parseWebhookUrl
 * checks those before the request is made.)
 */
export function guardedAgent(policy: AddressPolicy): Agent {
  const resolve = policy.resolve ?? systemResolver;
  const lookup = (
    hostname: string,
    options: { all?: boolean; family?: number | string } | LookupCallback,
    callback?: LookupCallback,
  ) => {
    const done = (typeof options === "function" ? options : callback)!;
    const all = typeof options === "object" && options.all === true;
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0)
          return done(Object.assign(new Error(`${hostname} does not resolve`), { code: "ENOTFOUND" }), "");
        if (!addresses.every((a) => isAllowedAddress(a.address, policy)))
          return done(new RefusedAddressError(hostname), "");
        if (all) return done(null, addresses);
        done(null, addresses[0].address, addresses[0].family);
      },
      (error) => done(error, ""),
    );
  };
  return new Agent({ connect: { lookup: lookup as never }, pipelining: 0 });
}
