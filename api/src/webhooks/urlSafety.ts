/**
 * Outbound safety for webhook URLs: http(s) only, and in production no host that resolves to a loopback, private,
 * link-local, unique-local or cloud-metadata address (checked at registration and again before each delivery,
 * since DNS can change). Development allows loopback so local receivers work.
 */
import { lookup } from "node:dns/promises";
import net from "node:net";
import { AppError } from "../http/appError.ts";

const refuse = (url: string, reason: string) => new AppError(400, "INVALID_WEBHOOK_URL", `Webhook URL refused: ${reason}`, { url });

function isInternal(address: string): boolean {
  if (net.isIPv4(address)) {
    const [a, b] = address.split(".").map(Number);
    return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
  }
  const lower = address.toLowerCase();
  if (lower.startsWith("::ffff:")) return isInternal(lower.slice(7));
  return lower === "::1" || lower === "::" || lower.startsWith("fe80:") || lower.startsWith("fc") || lower.startsWith("fd");
}

const isLoopback = (address: string) => address === "::1" || address.startsWith("127.") || address === "::ffff:127.0.0.1";

export async function checkWebhookUrl(raw: string, options: { production: boolean }): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(raw, "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse(raw, "only http and https are allowed");
  if (url.username || url.password) throw refuse(raw, "credentials in the URL are not allowed");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = net.isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw refuse(raw, `host ${host} does not resolve`);
  for (const address of addresses) {
    if (!isInternal(address)) continue;
    if (!options.production && isLoopback(address)) continue;
    throw refuse(raw, `${host} resolves to an internal address (${address})`);
  }
  return url;
}
