/**
 * An applicant's access token from the development identity provider (DEV_CONVENIENCES), as a browser gets it:
 * authorize with a PKCE S256 challenge (no password: `login_hint` names the applicant), then exchange the code with
 * its verifier. For the benchmarks' own stacks; `apiBase` ends in /api/v1.
 */
const CLIENT_ID = "demo";
const REDIRECT_URI = "http://127.0.0.1:9/cb";
// RFC 7636's example pair: the challenge is the S256 of the verifier.
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

export async function developmentSignIn(apiBase: string, applicantId: string, name?: string): Promise<string> {
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    redirect_uri: REDIRECT_URI,
    state: "s",
    login_hint: applicantId,
    ...(name ? { name } : {}),
  });
  const login = await fetch(`${apiBase}/auth/identitylocker/authorize?${query}`, { redirect: "manual" });
  const code = new URL(login.headers.get("location")!).searchParams.get("code");
  const exchange = await fetch(`${apiBase}/auth/identitylocker/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code, client_id: CLIENT_ID, code_verifier: VERIFIER, redirect_uri: REDIRECT_URI }),
  });
  const body = (await exchange.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`development sign-in of ${applicantId} failed: ${JSON.stringify(body)}`);
  return body.access_token;
}
