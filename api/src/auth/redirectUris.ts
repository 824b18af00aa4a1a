/**
 * Which redirect_uri an applicant's client may receive an identity-locker code at (RFC 9700 §2.1, §4.1.3): the
 * exact string registered for that client in REDIRECT_URI_ALLOWLIST (entries `client_id=uri`, or a bare `uri`
 * whose client_id is the URI's origin), compared as strings, so nothing under a registered prefix qualifies. With
 * DEV_CONVENIENCES (never in production) any loopback http URI is accepted, any port, as RFC 8252 §7.3 allows for
 * native apps.
 */
export interface RegisteredRedirect {
  clientId: string;
  redirectUri: string;
}

/** Parses REDIRECT_URI_ALLOWLIST entries. */
export function registeredRedirects(entries: readonly string[]): RegisteredRedirect[] {
  return entries.map((entry) => {
    const named = /^([\w.:-]+)=(https?:\/\/.+)$/.exec(entry);
    if (named && !named[1].includes("//")) return { clientId: named[1], redirectUri: named[2] };
    let clientId = entry;
    try {
      clientId = new URL(entry).origin;
    } catch {
      // kept as is: it matches no valid redirect_uri
    }
    return { clientId, redirectUri: entry };
  });
}

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

export function redirectUriProblem(
  clientId: string,
  uri: string,
  registered: readonly RegisteredRedirect[],
  allowLoopback: boolean,
): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "it is not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http and https URLs are accepted";
  if (url.hash || uri.includes("#")) return "it must not contain a fragment";
  if (url.username || url.password) return "it must not contain credentials";
  if (allowLoopback && url.protocol === "http:" && LOOPBACK.includes(url.hostname)) return undefined;
  const exact = registered.filter((r) => r.redirectUri === uri);
  if (exact.length === 0) return "it is not a registered redirect_uri (REDIRECT_URI_ALLOWLIST, exact match)";
  return exact.some((r) => r.clientId === clientId) ? undefined : "it is not registered for this client_id";
}
