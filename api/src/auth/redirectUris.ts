/**
 * Which redirect_uri an applicant's client may send the identity-locker code to: a prefix of REDIRECT_URI_ALLOWLIST
 * (matched at a path boundary, on the URI as sent and as normalised, so "https://app.example" does not admit
 * "https://app.example.evil" and "/cb/../x" does not escape "/cb/"), or, outside production, any loopback
 * http URI (http://127.0.0.1, http://localhost, http://[::1], any port), as RFC 8252 suggests for native apps.
 */
export function redirectUriProblem(uri: string, allowlist: readonly string[], production: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "it is not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http and https URLs are accepted";
  if (url.hash || uri.includes("#")) return "it must not contain a fragment";
  if (url.username || url.password) return "it must not contain credentials";
  if (!production && url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) return undefined;
  const allowed = allowlist.some((prefix) => matchesPrefix(uri, prefix) && matchesPrefix(url.href, prefix));
  return allowed ? undefined : "it is not in REDIRECT_URI_ALLOWLIST";
}

function matchesPrefix(uri: string, prefix: string): boolean {
  if (!prefix || !uri.startsWith(prefix)) return false;
  if (uri.length === prefix.length || /[/?]$/.test(prefix)) return true;
  return "/?".includes(uri[prefix.length]);
}
