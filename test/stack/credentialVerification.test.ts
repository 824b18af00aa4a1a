/**
 * Verification of a presented credential (POST /verify/credential) on the real stack: both formats as the holder
 * downloads them, an SD-JWT presentation that discloses the licence number alone, a key-bound presentation; the
 * chain's verdict through suspension, reinstatement and revocation with our status lists' answers; and credentials
 * that must never be VALID: signed by another key, naming another issuer, a tampered disclosure, a modified payload,
 * something we signed that is not a licence, garbage, and a credential past its validUntil.
 */
import { expect } from "chai";
import { CompactSign, decodeJwt, decodeProtectedHeader, generateKeyPair, type CompactJWSHeaderParameters } from "jose";
import { digest, ES256 } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { loadCredentialKey } from "../../api/src/chain/credentialKey.ts";
import { registerWorkflow } from "../../api/src/domain/workflows/registerWorkflow.ts";
import { statusPosition } from "../../api/src/domain/credentials/statusLists.ts";
import { applicantToken } from "./support/authClient.ts";
import type { departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { domainContext, seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { draftRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("verification of a presented credential (vc+jwt, SD-JWT VC; real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const code = `PRESENT_${letters(run)}`;
  const holderName = `Priya Presenter ${letters(run)}`;
  let driver: Driver;
  let api: string;
  let admin: ReturnType<typeof http>;
  let applicant: Applicant;
  let applicantBearer: string;
  let department: ReturnType<typeof departmentClient>;
  let did: string;
  const licences: Record<string, { id: string; tokenId: number; requestNumber: string }> = {};
  const credentials: Record<string, string> = {};

  const permit = (name: string) =>
    workflow("TRADE_LICENSE", name, stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] }));
  async function issue(label: string) {
    const draft = await draftRequest(applicant, "TRADE_LICENSE", { SITE_PLAN: pdf(`present ${label} ${run}`) });
    expect((await applicant.post(`/requests/${draft.id}/submit`)).status).to.equal(200);
    const approved = await department.post(`/requests/${draft.id}/approve`, {
      remarks: "ok",
      reviewedDocuments: [draft.docs.SITE_PLAN],
    });
    expect(approved.status).to.equal(200);
    licences[label] = draft;
    return draft;
  }
  const download = async (format: string, requestId: string, query = "") => {
    const response = await fetch(
      `${api}/api/v1/requests/${requestId}/credential?format=${encodeURIComponent(format)}${query}`,
      { headers: { authorization: `Bearer ${applicantBearer}` } },
    );
    expect(response.status, await response.clone().text()).to.equal(200);
    return response.text();
  };
  const present = async (credential: unknown) => {
    const response = await http(api).post("/verify/credential", { credential });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  };
  const invalid = async (credential: string, reason: string) => {
    const answer = await present(credential);
    expect(answer, reason).to.include({ isValid: false, verdict: "INVALID_CREDENTIAL", tokenId: null });
    expect(answer.credential.reason).to.equal(reason);
    expect(answer.applicantName).to.equal(null);
    return answer;
  };

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    department = (await departmentSession(api, adminToken, { code, name: "Presentation Office" })).client;
    applicantBearer = await applicantToken(api, { id: `present-${run}`, name: holderName });
    applicant = { ...http(api, applicantBearer), id: `present-${run}` };
    // A licence valid for 8 s (its workflow version says so): its credential is downloaded at once, presented later.
    const context = domainContext(stack, driver);
    await registerWorkflow(
      {
        ...context,
        config: {
          ...context.config,
          licenceValidityDays: { ...context.config.licenceValidityDays, TRADE_LICENSE: 8 / 86_400 },
        },
      },
      permit("Short-lived trade licence"),
    );
    const expiring = await issue("expiring");
    credentials.expiring = await download("vc+jwt", expiring.id);
    credentials.expiringSd = await download("dc+sd-jwt", expiring.id);
    await seedWorkflow(stack, driver, permit("Presented trade licence"));
    const licence = await issue("valid");
    credentials.vc = await download("vc+jwt", licence.id);
    credentials.sd = await download("dc+sd-jwt", licence.id);
    did = (await (await fetch(`${api}/.well-known/did.json`)).json()).id;
  });
  after(async () => driver?.close());

  it("vc+jwt → VALID: the chain's verdict, with the credential's issuer, signature, status bits, dates and subject", async function () {
    const answer = await present(credentials.vc);
    const byToken = (await http(api).get(`/verify/${licences.valid.tokenId}`)).body;
    const { checkedAt: _a, credential, ...verdict } = answer;
    const { checkedAt: _b, ...expected } = byToken;
    expect(verdict).to.deep.equal(expected);
    expect(answer).to.include({ isValid: true, verdict: "VALID", applicantName: holderName });
    const { list, index } = statusPosition(BigInt(licences.valid.tokenId));
    expect(credential).to.deep.include({
      format: "vc+jwt",
      issuer: did,
      signatureValid: true,
      reason: null,
      status: { list, index, revocation: 0, suspension: 0, tokenStatus: null },
      validFrom: byToken.issuedAt,
      validUntil: byToken.expiresAt,
      withinValidity: true,
      keyBinding: null,
    });
    expect(credential.disclosed).to.deep.equal({
      type: "Licence",
      licenceNumber: licences.valid.requestNumber,
      licenceType: "TRADE_LICENSE",
    });
    // Pasted with the line breaks a chat or an e-mail put in it.
    const wrapped = credentials.vc.replace(/(.{76})/g, "$1\n  ");
    expect((await present(`  ${wrapped}\n`)).verdict).to.equal("VALID");
  });

  it("dc+sd-jwt → VALID with every claim disclosed; a presentation of the licence number alone discloses no name", async function () {
    const whole = await present(credentials.sd);
    expect(whole).to.include({ isValid: true, verdict: "VALID", tokenId: licences.valid.tokenId });
    expect(whole.credential).to.deep.include({ format: "dc+sd-jwt", issuer: did, signatureValid: true });
    expect(whole.credential.status).to.include({ tokenStatus: 0, revocation: null, suspension: null });
    expect(whole.credential.disclosed).to.deep.equal({
      licence_number: licences.valid.requestNumber,
      licence_type: "TRADE_LICENSE",
      holder_name: holderName,
    });

    const wallet = new SDJwtVcInstance({ hasher: digest, hashAlg: "sha-256" });
    const numberOnly = await wallet.present(credentials.sd, { licence_number: true });
    const answer = await present(numberOnly);
    expect(answer).to.include({ isValid: true, verdict: "VALID" });
    expect(answer.credential.disclosed).to.deep.equal({ licence_number: licences.valid.requestNumber });
    expect(JSON.stringify(answer.credential)).to.not.include(holderName);
  });

  it("key binding: a presentation signed by the cnf key is VALID with its aud and nonce; by another key, KEY_BINDING", async function () {
    const holder = await ES256.generateKeyPair();
    const bound = await download(
      "dc+sd-jwt",
      licences.valid.id,
      `&holderKey=${Buffer.from(JSON.stringify(holder.publicKey)).toString("base64url")}`,
    );
    const kb = { payload: { iat: Math.floor(Date.now() / 1000), aud: "https://inspector.example", nonce: run } };
    const presentedBy = async (privateKey: object) =>
      new SDJwtVcInstance({
        hasher: digest,
        hashAlg: "sha-256",
        kbSigner: await ES256.getSigner(privateKey),
        kbSignAlg: "ES256",
      }).present(bound, { licence_number: true }, { kb });
    const answer = await present(await presentedBy(holder.privateKey));
    expect(answer).to.include({ verdict: "VALID" });
    expect(answer.credential.keyBinding).to.deep.equal({
      aud: "https://inspector.example",
      nonce: run,
      iat: kb.payload.iat,
    });
    await invalid(await presentedBy((await ES256.generateKeyPair()).privateKey), "KEY_BINDING");
  });

  it("follows the chain: suspend → SUSPENDED (the lists say suspended), reinstate → VALID, revoke → REVOKED", async function () {
    const licence = await issue("suspended");
    const vc = await download("vc+jwt", licence.id);
    const sd = await download("dc+sd-jwt", licence.id);
    // The SD-JWT first: once its list answers, the index behind both formats' lists has the change.
    const both = async () => {
      const sdAnswer = await present(sd);
      return [await present(vc), sdAnswer];
    };

    expect(
      (await admin.post(`/requests/${licence.id}/suspend`, { reasonCode: 3, reason: "inspection" })).status,
    ).to.equal(200);
    const [vcSuspended, sdSuspended] = await eventually("the suspension in the lists", async () => {
      const answers = await both();
      return answers[1].credential.status.tokenStatus === 2 ? answers : undefined;
    });
    for (const answer of [vcSuspended, sdSuspended])
      expect(answer).to.include({ isValid: false, verdict: "SUSPENDED", status: "SUSPENDED" });
    expect(vcSuspended.credential.status).to.include({ suspension: 1, revocation: 0 });

    expect((await admin.post(`/requests/${licence.id}/reinstate`, {})).status).to.equal(200);
    const [vcValid, sdValid] = await eventually("the reinstatement in the lists", async () => {
      const answers = await both();
      return answers[1].credential.status.tokenStatus === 0 ? answers : undefined;
    });
    for (const answer of [vcValid, sdValid]) expect(answer).to.include({ isValid: true, verdict: "VALID" });
    expect(vcValid.credential.status).to.include({ suspension: 0, revocation: 0 });

    expect((await admin.post(`/requests/${licence.id}/revoke`, { reasonCode: 4, reason: "fraud" })).status).to.equal(
      200,
    );
    const [vcRevoked, sdRevoked] = await eventually("the revocation in the lists", async () => {
      const answers = await both();
      return answers[1].credential.status.tokenStatus === 1 ? answers : undefined;
    });
    for (const answer of [vcRevoked, sdRevoked])
      expect(answer).to.include({ isValid: false, verdict: "REVOKED", status: "REVOKED" });
    expect(vcRevoked.credential.status).to.include({ suspension: 0, revocation: 1 });
  });

  it("never VALID: another key with our name, another issuer, a tampered disclosure, a modified payload, garbage", async function () {
    const [header, payload] = credentials.vc.split(".");
    const claims = decodeJwt(credentials.vc);
    const stranger = await generateKeyPair("ES256");
    const signedByStranger = (body: object) =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(body)))
        .setProtectedHeader(JSON.parse(Buffer.from(header, "base64url").toString()))
        .sign(stranger.privateKey);
    const forged = await invalid(await signedByStranger(claims), "BAD_SIGNATURE");
    expect(forged.credential).to.include({ format: "vc+jwt", issuer: did, signatureValid: false });
    const elsewhere = "did:web:licences.elsewhere.example";
    const foreign = await invalid(
      await signedByStranger({ ...claims, iss: elsewhere, issuer: elsewhere }),
      "UNKNOWN_ISSUER",
    );
    expect(foreign.credential.issuer).to.equal(elsewhere);

    // A payload changed under the platform's signature: the number of another licence.
    const altered = {
      ...claims,
      credentialSubject: { ...(claims as any).credentialSubject, licenceNumber: "TL-2026-999999" },
    };
    await invalid([header, b64(altered), credentials.vc.split(".")[2]].join("."), "BAD_SIGNATURE");

    // An SD-JWT whose holder-name disclosure was rewritten: its digest is not among the signed ones.
    const parts = credentials.sd.split("~");
    const named = parts.findIndex(
      (part, i) => i > 0 && part && Buffer.from(part, "base64url").toString().includes(holderName),
    );
    const disclosure = JSON.parse(Buffer.from(parts[named], "base64url").toString());
    parts[named] = b64([disclosure[0], disclosure[1], "Mallory Impostor"]);
    const tampered = await invalid(parts.join("~"), "TAMPERED");
    expect(tampered.credential).to.include({ format: "dc+sd-jwt", signatureValid: true });
    expect(JSON.stringify(tampered)).to.not.include("Mallory");

    // Signed by the platform, but a status list is not a licence.
    const statusList = await (await fetch(`${api}/credentials/status/0/revocation`)).text();
    await invalid(statusList, "NOT_A_LICENCE");

    for (const garbage of ["hello", "a.b.c", "~~~", `${header}.${payload}`, b64({ typ: "vc+jwt" })])
      await invalid(garbage, "MALFORMED");
    expectError(await http(api).post("/verify/credential", { credential: "" }), 400, "VALIDATION_ERROR");
    expectError(await http(api).post("/verify/credential", { token: credentials.vc }), 400, "VALIDATION_ERROR");
  });

  it("NOT_YET_VALID: a credential signed with the issuer's own key whose validFrom is ahead of our clock and the chain's", async function () {
    const issuerKey = await loadCredentialKey(driver.core.pool, driver.core.vault);
    const payload = decodeJwt(credentials.vc);
    const tomorrow = Math.floor(Date.now() / 1000) + 86_400;
    const early = {
      ...payload,
      validFrom: new Date(tomorrow * 1000).toISOString(),
      ...(payload.nbf ? { nbf: tomorrow } : {}),
    };
    const header = decodeProtectedHeader(credentials.vc);
    const { alg: _alg, ...rest } = header;
    const signed = await issuerKey.signJws(rest as never, new TextEncoder().encode(JSON.stringify(early)));
    const answer = await invalid(signed, "NOT_YET_VALID");
    expect(answer.credential).to.include({ signatureValid: true, withinValidity: false });
    // The same signing path with the credential's own validFrom is accepted: the refusal is the date alone.
    const same = await issuerKey.signJws(rest as never, new TextEncoder().encode(JSON.stringify(payload)));
    expect(await present(same)).to.include({ isValid: true, verdict: "VALID" });
  });

  it("EXPIRED once the credential's validUntil has passed (both formats), the licence still named", async function () {
    const { exp } = decodeJwt(credentials.expiring);
    await sleep(Math.max(0, exp! * 1000 - Date.now() + 1_000));
    for (const credential of [credentials.expiring, credentials.expiringSd]) {
      const answer = await present(credential);
      expect(answer).to.include({ isValid: false, verdict: "EXPIRED", tokenId: licences.expiring.tokenId });
      expect(answer.message).to.match(/expired/);
      expect(answer.credential).to.include({ signatureValid: true, withinValidity: false, reason: null });
    }
    // Past its validUntil and forged: the signature is checked first, so it is INVALID_CREDENTIAL, not EXPIRED.
    const stranger = await generateKeyPair("ES256");
    const forged = await new CompactSign(Buffer.from(credentials.expiring.split(".")[1], "base64url"))
      .setProtectedHeader(decodeProtectedHeader(credentials.expiring) as CompactJWSHeaderParameters)
      .sign(stranger.privateKey);
    await invalid(forged, "BAD_SIGNATURE");
  });
});
