/**
 * No secret reaches a log. Drives the main flows over HTTP (client credentials, a system client, departments and
 * their API keys, a signed department request, webhooks with secrets and signed deliveries, the applicant's
 * sign-in, a request from creation to issuance, a signed download URL, a key regeneration, and failed attempts
 * with wrong credentials), collects every secret the platform issued or was given — plus the stack's own keys
 * under DATA_DIR/secrets, the custodial wallets' private keys (opened with the API's own vault code) and the
 * custodial keys derived from the custody secret (the issued licence's own, the applicant's older one), the
 * credential-signing key, the licence's wallet credentials (both formats) and an OID4VCI offer's code, access
 * token and nonce — then
 * reads every log file the stack wrote (DATA_DIR/logs) and asserts that none of those values, and no bearer JWT or
 * PEM private key block, appears in any of them.
 */
import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { computeAddress } from "ethers";
import { SignJWT } from "jose";
import { KeyVault } from "../../api/src/chain/keyVault.ts";
import { secretSealer } from "../../api/src/chain/secretSealer.ts";
import { WalletStore } from "../../api/src/chain/walletStore.ts";
import { loadConfig } from "../../api/src/config.ts";
import { createPool } from "../../api/src/db/pool.ts";
import { applicantAddress, licenceAddress } from "../../api/src/chain/applicantKeys.ts";
import { masterKeyOf } from "../../api/src/services.ts";
import { applicantCode, clientToken, createClient, exchangeFields } from "./support/authClient.ts";
import { createDepartment, departmentClient, type CreatedTestDepartment } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient, type HttpResult, expectError } from "./support/httpClient.ts";
import { pdf } from "./support/sampleFiles.ts";
import { letters } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { submittedRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";
import { startReceiver, type Receiver } from "./support/webhookReceiver.ts";
import { registerWorkflowVersion } from "./support/workflowAdmin.ts";

/** Shapes a leaked credential would have, whoever's it is (these tests', other tests', the stack's). */
const SECRET_PATTERNS: [string, RegExp][] = [
  ["a bearer JWT", /Bearer\s+ey[\w-]/i],
  ["a JWT", /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16,}/],
  ["a PEM private key block", /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ["a client secret (lcs_…)", /\blcs_[\w-]{32,}/],
  ["a department API key (ldk_…)", /\bldk_[\w-]{32,}/],
  ["a department API secret (lds_…)", /\blds_[\w-]{32,}/],
];

interface LogFile {
  name: string;
  text: string;
}

/** Every file under `dir`, recursively (rotated or nested logs included). */
async function readLogs(dir: string): Promise<LogFile[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries.filter((e) => e.isFile());
  return Promise.all(
    files.map(async (e) => {
      const file = path.join(e.parentPath, e.name);
      return { name: path.relative(dir, file), text: await readFile(file, "utf8") };
    }),
  );
}

/** Where `needle` occurs (case-insensitive): file and line numbers, never the value itself. */
function occurrences(logs: LogFile[], needle: string | RegExp): string[] {
  const found: string[] = [];
  for (const log of logs) {
    const lines = log.text.split("\n");
    lines.forEach((line, i) => {
      const hit = typeof needle === "string" ? line.toLowerCase().includes(needle.toLowerCase()) : needle.test(line);
      if (hit) found.push(`${log.name}:${i + 1}`);
    });
  }
  return found;
}

/** A custodial private key, derived like api/src/chain/applicantKeys.ts (checked against its address by the caller). */
function custodialPrivateKey(custodySecret: string, message: string): string {
  const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const secret = Buffer.from(custodySecret.replace(/^0x/, ""), "hex");
  let digest = createHmac("sha256", secret).update(message).digest();
  for (;;) {
    const scalar = BigInt(`0x${digest.toString("hex")}`);
    if (scalar > 0n && scalar < ORDER) return `0x${digest.toString("hex")}`;
    digest = createHmac("sha256", secret).update(digest).digest();
  }
}

describe("secrets never reach the logs (main flows over HTTP, every log file of the stack)", function () {
  const run = `${Date.now() % 1e8}`;
  const tag = letters(run);
  const applicantId = `secret-scan-${run}`;
  /** Every secret value seen, with what it is (never printed: a failure names only what and where). */
  const secrets = new Map<string, string>();
  const keep = (what: string, value: string | undefined | null) => {
    if (!value || value.length < 12) return;
    secrets.set(value, what);
    // Hex keys are also looked for without their 0x.
    if (/^0x[0-9a-f]{24,}$/i.test(value)) secrets.set(value.slice(2), `${what} (hex without 0x)`);
  };
  let receiver: Receiver;
  let requestLines = 0;
  let logs: LogFile[] = [];
  let api: string;
  let admin: ReturnType<typeof apiClient> | undefined;
  const webhookIds: string[] = [];

  const must = (result: HttpResult, status: number, what: string) => {
    if (result.status !== status)
      throw new Error(`${what}: expected ${status}, got ${result.status} ${JSON.stringify(result.body)}`);
    return result.body;
  };

  before(async function () {
    const stack = current();
    api = stack.api.url;
    const config = loadConfig(stack.env);
    const hookSecret = `department-webhook-secret-${randomUUID()}`;
    const adminHookSecret = `admin-webhook-secret-${randomUUID()}`;
    receiver = await startReceiver({ "/hooks/department": hookSecret, "/hooks/admin": adminHookSecret });

    // ---- System clients: the bootstrap administrator, a created client (form fields and HTTP Basic).
    keep("bootstrap admin client secret", stack.admin.clientSecret);
    const adminToken = await clientToken(api, stack.admin.clientId, stack.admin.clientSecret, "admin");
    keep("admin access token", adminToken);
    admin = apiClient(api, adminToken);
    const client = await createClient(api, adminToken, `secret scan ${run}`, [
      "applications:read",
      "applications:write",
      "documents:read",
      "documents:write",
    ]);
    keep("system client secret", client.clientSecret);
    keep("system client access token", await clientToken(api, client.clientId, client.clientSecret));
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64");
    keep("HTTP Basic client credentials", basic);
    const basicToken = (
      (await await fetch(`${api}/api/v1/auth/token`, {
        method: "POST",
        headers: { authorization: `Basic ${basic}` },
        body: new URLSearchParams({ grant_type: "client_credentials", scope: "applications:read" }),
      }).then((r) => r.json())) as { access_token: string }
    ).access_token;
    expect(basicToken).to.be.a("string");
    keep("system client access token (Basic)", basicToken);
    const systemClient = apiClient(api, basicToken);

    // ---- Departments: one plain, one that must sign every request.
    const [planning, fire] = await Promise.all([
      createDepartment(api, adminToken, { code: `SCAN_P_${tag}`, name: "Secret scan planning" }),
      createDepartment(api, adminToken, {
        code: `SCAN_F_${tag}`,
        name: "Secret scan fire",
        requireSignedRequests: true,
      }),
    ]);
    for (const d of [planning, fire]) {
      keep(`${d.code} API key`, d.apiKey);
      keep(`${d.code} API secret`, d.apiSecret);
    }
    const asPlanning = departmentClient(api, planning);
    const asFire = departmentClient(api, fire, { sign: true });
    expect(
      (await departmentClient(api, fire).get(`/requests/pending?department=${fire.code}`)).status,
      "unsigned call of a signing department",
    ).to.equal(401);

    // ---- Webhooks with secrets: the department's and an administrator's (every event).
    const departmentHook = must(
      await asPlanning.post("/webhooks", {
        url: `${receiver.base}/hooks/department`,
        events: ["APPROVAL_REQUIRED", "application.submitted", "certificate.issued"],
        secret: hookSecret,
      }),
      201,
      "department webhook",
    );
    const adminHook = must(
      await admin.post("/webhooks", {
        url: `${receiver.base}/hooks/admin`,
        events: ["application.submitted", "certificate.issued"],
        secret: adminHookSecret,
      }),
      201,
      "admin webhook",
    );
    webhookIds.push(departmentHook.webhookId, adminHook.webhookId);
    keep("department webhook secret", hookSecret);
    keep("administrator webhook secret", adminHookSecret);
    expect(must(await admin.post(`/webhooks/${adminHook.webhookId}/test`), 200, "test delivery").success).to.equal(
      true,
    );

    // ---- The workflow: both departments review the site plan.
    await registerWorkflowVersion(
      api,
      adminToken,
      workflow(
        "BUILDING_PERMIT",
        `Building permit (secret scan ${run})`,
        stage("review", "Review", "PARALLEL", { [planning.code]: ["SITE_PLAN"], [fire.code]: ["SITE_PLAN"] }),
      ),
    );

    // ---- The applicant signs in (code → token), creates, uploads, submits; both departments approve.
    const code = await applicantCode(api, { id: applicantId, name: "Sam Secret", email: "sam@example.org" });
    keep("identity-locker code", code);
    const exchanged = await fetch(`${api}/api/v1/auth/identitylocker/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(exchangeFields(code)),
    });
    const applicantToken = ((await exchanged.json()) as { access_token: string }).access_token;
    keep("applicant access token", applicantToken);
    const applicant = { ...apiClient(api, applicantToken), id: applicantId };
    const { id: requestId, docs } = await submittedRequest(applicant, "BUILDING_PERMIT", {
      SITE_PLAN: pdf(`secret scan ${run}`),
    });
    expect(
      must(await asPlanning.get(`/requests/pending?department=${planning.code}`), 200, "pending").requests.map(
        (r: { requestId: string }) => r.requestId,
      ),
    ).to.include(requestId);
    must(
      await asPlanning.post(`/requests/${requestId}/approve`, {
        remarks: "Plan fine",
        reviewedDocuments: [docs.SITE_PLAN],
      }),
      200,
      "approve (planning)",
    );
    const final = must(
      await asFire.post(`/requests/${requestId}/approve`, {
        remarks: "Exits fine",
        reviewedDocuments: [docs.SITE_PLAN],
      }),
      200,
      "approve (fire, signed)",
    );
    expect(final.workflowStatus.isComplete).to.equal(true);
    must(await applicant.post("/delegations", { clientId: client.clientId }), 201, "delegate to the system client");
    must(await systemClient.get(`/requests/${requestId}`), 200, "read as system client");

    // ---- A signed download URL (a capability: whoever holds it downloads).
    const download = must(await applicant.get(`/documents/${docs.SITE_PLAN}/download`), 200, "download URL");
    const url = new URL(download.downloadUrl);
    keep("signed download URL signature", url.searchParams.get("signature"));
    expect((await fetch(url)).status).to.equal(200);
    must(await applicant.get(`/requests/${requestId}/qr?format=json`), 200, "qr");

    // ---- The licence as a wallet credential (a holder's bearer credential: never logged) and its status lists.
    for (const format of ["vc%2Bjwt", "dc%2Bsd-jwt"]) {
      const response = await fetch(`${api}/api/v1/requests/${requestId}/credential?format=${format}`, {
        headers: { authorization: `Bearer ${applicantToken}` },
      });
      expect(response.status, format).to.equal(200);
      keep(`licence credential (${format})`, await response.text());
    }
    for (const kind of ["revocation", "token-status"])
      expect((await fetch(`${api}/credentials/status/0/${kind}`)).status, kind).to.equal(200);
    // OID4VCI: the offer's pre-authorized code (also in its credential_offer_uri), the wallet's access token, a nonce;
    // the code used twice (a refusal).
    const offer = must(await applicant.post(`/requests/${requestId}/credential-offer`), 201, "credential offer");
    const preAuthorizedCode =
      offer.credentialOffer.grants["urn:ietf:params:oauth:grant-type:pre-authorized_code"]["pre-authorized_code"];
    keep("OID4VCI pre-authorized code", preAuthorizedCode);
    expect((await fetch(offer.credentialOfferReference)).status).to.equal(200);
    const redeem = () =>
      fetch(`${api}/oid4vci/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:pre-authorized_code",
          "pre-authorized_code": preAuthorizedCode,
        }),
      });
    const token = await redeem();
    expect(token.status).to.equal(200);
    keep("OID4VCI access token", (await token.json()).access_token);
    expect((await redeem()).status).to.equal(400);
    const nonce = await fetch(`${api}/oid4vci/nonce`, { method: "POST" });
    keep("OID4VCI c_nonce", (await nonce.json()).c_nonce);

    // ---- Key regeneration: new credentials, used at once.
    const regenerated = must(await admin.post(`/departments/${planning.code}/regenerate-api-key`), 200, "regenerate");
    keep("regenerated API key", regenerated.apiKey);
    keep("regenerated API secret", regenerated.apiSecret);
    must(
      await departmentClient(api, {
        code: planning.code,
        apiKey: regenerated.apiKey,
        apiSecret: regenerated.apiSecret,
      } as CreatedTestDepartment).get(`/requests/pending?department=${planning.code}`),
      200,
      "new key",
    );

    // ---- Wrong credentials given to the platform: refused, and not logged either.
    const wrongSecret = `lcs_${randomUUID().replaceAll("-", "")}${randomUUID().replaceAll("-", "")}`;
    keep("wrong client secret", wrongSecret);
    const refused = await fetch(`${api}/api/v1/auth/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: client.clientId,
        client_secret: wrongSecret,
      }),
    });
    expect(refused.status).to.equal(401);
    expect(await refused.json()).to.deep.include({ error: "invalid_client" });
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const forged = await new SignJWT({ scope: "admin", kind: "client" })
      .setProtectedHeader({ alg: "ES256" })
      .setSubject(stack.admin.clientId)
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(privateKey);
    keep("forged bearer token", forged);
    expectError(await apiClient(api, forged).get("/admin/clients"), 401);
    const wrongKey = `ldk_${randomUUID()}${randomUUID()}`;
    keep("wrong API key", wrongKey);
    expect(
      (
        await departmentClient(api, {
          code: planning.code,
          apiKey: wrongKey,
          apiSecret: "x",
        } as CreatedTestDepartment).get("/requests")
      ).status,
    ).to.equal(401);
    expect(
      (
        await fetch(`${api}/api/v1/auth/identitylocker/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(exchangeFields(code)),
        })
      ).status,
      "a used code",
    ).to.equal(400);

    // Webhook deliveries (signed with the registered secrets) reached the receiver.
    await eventually(
      "signed webhook deliveries",
      async () =>
        receiver.at("/hooks/department").some((r) => r.verified) &&
        receiver.at("/hooks/admin").filter((r) => r.verified).length >= 2
          ? true
          : undefined,
      30_000,
    );

    // ---- The stack's own secrets: every file under DATA_DIR/secrets (the admin client id is an identifier).
    const secretsDir = path.join(config.dataDir, "secrets");
    const names = (await readdir(secretsDir)).filter((name) => name !== "admin-client-id");
    expect(names).to.include.members([
      "master.key",
      "jwt-signing-key.pem",
      "admin-client-secret",
      "custody.key",
      "issuer.key",
      "file-url.key",
      "postgres.password",
    ]);
    for (const name of names) {
      const value = (await readFile(path.join(secretsDir, name), "utf8")).trim();
      keep(`DATA_DIR/secrets/${name}`, value);
      if (value.startsWith("0x")) keep(`DATA_DIR/secrets/${name} (as used)`, value.slice(2));
      if (value.includes("PRIVATE KEY-----")) {
        const body = value.split("\n").filter((line) => !line.startsWith("-----"));
        keep(`DATA_DIR/secrets/${name} (base64 body)`, body.join(""));
        body.forEach((line, i) => keep(`DATA_DIR/secrets/${name} (body line ${i + 1})`, line));
      }
    }

    // ---- Custodial wallets: the raw private keys, opened with the API's own vault (the table holds them sealed).
    const pool = createPool(stack.databaseUrl, config.apiSchema, 2);
    try {
      const wallets = new WalletStore(pool, new KeyVault(await masterKeyOf(config)));
      const all = await wallets.all();
      expect(all.map((w) => w.purpose)).to.include.members(["OPERATOR", "DEPARTMENT"]);
      // Wallets of a remote signer (remoteSigner.test.ts) have no key here to leak.
      for (const wallet of all.filter((w) => w.signer === "local"))
        keep(
          `${wallet.purpose} wallet private key ${wallet.address}`,
          (await wallets.signer(wallet.address)).privateKey,
        );
      // The credential-signing key, opened as the API opens it.
      const { rows } = await pool.query(`SELECT key_id, sealed_key FROM credential_keys`);
      const sealer = secretSealer(new KeyVault(await masterKeyOf(config)), "credential-signing-key");
      for (const row of rows) keep("credential signing key", JSON.parse(sealer.open(row.key_id, row.sealed_key)).d);
    } finally {
      await pool.end();
    }
    const custodySecret = config.custodySecret ?? (await readFile(path.join(secretsDir, "custody.key"), "utf8")).trim();
    // The licence's own key (the address it was minted to), and the applicant's one key of older licences.
    const licenceKey = custodialPrivateKey(custodySecret, `licence-approval/licence/v2:${requestId}:${applicantId}`);
    expect(computeAddress(licenceKey)).to.equal(licenceAddress(custodySecret, applicantId, requestId));
    keep("licence custodial private key", licenceKey);
    const applicantKey = custodialPrivateKey(custodySecret, `licence-approval/applicant/v1:${applicantId}`);
    expect(computeAddress(applicantKey)).to.equal(applicantAddress(custodySecret, applicantId));
    keep("applicant custodial private key (licences minted before per-licence addresses)", applicantKey);

    // ---- The logs, once the API has written this marker request's line (logs are appended asynchronously).
    const marker = `secret-scan-marker-${run}`;
    expect((await fetch(`${api}/health`, { headers: { "x-request-id": marker } })).status).to.be.oneOf([200, 503]);
    const logDir = path.join(config.dataDir, "logs");
    await eventually(
      "the marker request in the API log",
      async () => ((await readFile(path.join(logDir, "api.log"), "utf8")).includes(marker) ? true : undefined),
      15_000,
    );
    logs = await readLogs(logDir);
    requestLines = (logs.find((l) => l.name === "api.log")?.text.match(/"msg":"request"/g) ?? []).length;
  });

  after(async () => {
    // The administrator's webhook would otherwise receive every later test's events.
    for (const id of webhookIds) await admin?.delete(`/webhooks/${id}`);
    await receiver?.stop();
  });

  it("reads the real logs: the API log has a line for every request, the indexer wrote its own", function () {
    const names = logs.map((l) => l.name);
    expect(names).to.include.members(["api.log", "indexer.log"]);
    for (const log of logs) expect(log.text.length, `${log.name} is empty`).to.be.greaterThan(0);
    expect(requestLines, "request lines in api.log").to.be.greaterThan(25);
    const api = logs.find((l) => l.name === "api.log")!.text;
    // The flows above are in it (route templates, never paths with ids or tokens).
    for (const route of [
      "/api/v1/auth/token",
      "/api/v1/departments",
      "/api/v1/requests/:requestId/approve",
      "/api/v1/requests/:requestId/documents",
      "/api/v1/files/:token",
    ]) {
      expect(api, `a request line for ${route}`).to.include(`"route":"${route}"`);
    }
  });

  it("collected the secrets to look for", function () {
    const kinds = [...secrets.values()];
    for (const what of [
      "admin access token",
      "applicant access token",
      "system client secret",
      "department webhook secret",
      "DATA_DIR/secrets/master.key",
      "licence custodial private key",
      "credential signing key",
      "licence credential (vc%2Bjwt)",
      "applicant custodial private key (licences minted before per-licence addresses)",
    ]) {
      expect(kinds, what).to.include(what);
    }
    expect(kinds.filter((k) => k.includes("wallet private key")).length).to.be.greaterThan(2);
    expect(secrets.size).to.be.greaterThan(40);
  });

  it("no log contains any of them", function () {
    const leaks = [...secrets.entries()].flatMap(([value, what]) => {
      const where = occurrences(logs, value);
      return where.length
        ? [`${what} at ${where.slice(0, 5).join(", ")}${where.length > 5 ? ` (+${where.length - 5})` : ""}`]
        : [];
    });
    expect(leaks).to.deep.equal([]);
  });

  it("no log contains a bearer JWT, a PEM private key or a credential of the platform's formats", function () {
    const leaks = SECRET_PATTERNS.flatMap(([what, pattern]) => {
      const where = occurrences(logs, pattern);
      return where.length ? [`${what} at ${where.slice(0, 5).join(", ")}`] : [];
    });
    expect(leaks).to.deep.equal([]);
  });
});
