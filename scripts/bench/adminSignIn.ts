/**
 * The administrator's access token: the OAuth client_credentials grant with the admin client `npm start` prints
 * (ID=… SECRET=…). For the benchmarks' own stacks; `apiBase` ends in /api/v1.
 */
export async function adminSignIn(apiBase: string, admin: { clientId: string; clientSecret: string }): Promise<string> {
  const response = await fetch(`${apiBase}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: admin.clientId,
      client_secret: admin.clientSecret,
      scope: "admin",
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`the admin client's sign-in failed: ${JSON.stringify(body)}`);
  return body.access_token;
}
