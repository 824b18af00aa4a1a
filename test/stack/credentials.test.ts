/**
 * The licence as a wallet credential, on the real stack, checked the way an outside verifier would: the issuer's key
 * comes only from its did:web document fetched over HTTP; the vc+jwt is verified with jose, the SD-JWT VC with the
 * @sd-jwt library's own verifier (which fetches and checks the Token Status List itself); the W3C lists are decoded
 * by hand. Suspension, reinstatement and revocation through the admin API reach the lists once the index sees them.
 */
import { gunzipSync } from "node:zlib";
import { expect } from "chai";
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from "jose";
import { digest, ES256 } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { getListFromStatusListJWT } from "@sd-jwt/jwt-status-list";
import { loadCredentialKey } from "../../api/src/chain/credentialKey.ts";
import { secretSealer } from "../../api/src/chain/secretSealer.ts";
import { STATUS_LIST_SIZE, statusPosition } from "../../api/src/domain/credentials/statusLists.ts";
import { applicantToken } from "./support/authClient.ts";
import type { departmentClient } from "./support/departmentClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { draftRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

/** A did:web resolved the way a verifier resolves it, over plain HTTP because the test stack has no TLS. */
async function resolveDidWeb(did: string): Promise<Record<string, any>> {
  const [, , host, ...path] = did.split(":");
  const where = path.length ? path.map(decodeURIComponent).join("/") + "/did.json" : ".well-known/did.json";
  const response = await fetch(`http://${decodeURIComponent(host)}/${where}`);
  expect(response.status).to.equal(200);
  return response.json();
}

describe("the licence as a wallet credential (vc+jwt, SD-JWT VC, status lists; real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const code = `WALLET_${letters(run)}`;
  const holderName = `Wanda Wallet ${letters(run)}`;
  let driver: Driver;
  let api: string;
  let admin: ReturnType<typeof http>;
  let applicant: Applicant;
  let department: ReturnType<typeof departmentClient>;
  let issuerJwk: JWK;
  let did: string;
  let licence: { id: string; tokenId: number; requestNumber: string; hashes: Record<string, string> };

  let applicantBearer: string;
  const download = async (format: string, requestId = licence.id, bearer = applicantBearer) =>
    fetch(`${api}/api/v1/requests/${requestId}/credential?format=${encodeURIComponent(format)}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
  // Verifiers check validity at the later of this clock and the chain's: the suite's chain runs ahead of this clock (tests move it on), and
  // the credential's validFrom is the chain's issuance time.
  const chainSeconds = async () => Math.max(Math.floor(Date.now() / 1000), await driver.core.gateway.latestBlockTime());
  const atChain = async () => ({ currentDate: await chainSeconds() });
  const fetchList = async (list: number, kind: string) => fetch(`${api}/credentials/status/${list}/${kind}`);
  /** The bit of a W3C list at `index`, after checking the list's signature against the DID's key. */
  const bitstringBit = async (kind: "revocation" | "suspension", list: number, index: number) => {
    const response = await fetchList(list, kind);
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.equal("application/vc+jwt");
    const { payload } = await jwtVerify(await response.text(), await importJWK(issuerJwk, "ES256"), {
      typ: "vc+jwt",
    });
    const subject = (payload as any).credentialSubject;
    expect(subject).to.include({ type: "BitstringStatusList", statusPurpose: kind });
    expect(subject.encodedList[0]).to.equal("u");
    const bits = gunzipSync(Buffer.from(subject.encodedList.slice(1), "base64url"));
    expect(bits.length * 8).to.equal(STATUS_LIST_SIZE);
    return (bits[index >> 3] >> (7 - (index % 8))) & 1;
  };
  const tokenStatus = async (list: number, index: number) => {
    const response = await fetchList(list, "token-status");
    expect(response.headers.get("content-type")).to.equal("application/statuslist+jwt");
    const jwt = await response.text();
    await jwtVerify(jwt, await importJWK(issuerJwk, "ES256"), { typ: "statuslist+jwt" });
    const decoded = getListFromStatusListJWT(jwt);
    expect(decoded.statusList).to.have.length(STATUS_LIST_SIZE);
    return decoded.getStatus(index);
  };
  const sdJwtVerifier = async () =>
    new SDJwtVcInstance({ verifier: await ES256.getVerifier(issuerJwk), hasher: digest, hashAlg: "sha-256" });

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    department = (await departmentSession(api, adminToken, { code, name: "Wallet Office" })).client;
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", "Wallet licence", stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] })),
    );
    applicantBearer = await applicantToken(api, { id: `wallet-${run}`, name: holderName });
    applicant = { ...http(api, applicantBearer), id: `wallet-${run}` };
    const draft = await draftRequest(
      applicant,
      "BUILDING_PERMIT",
      { SITE_PLAN: pdf(`wallet ${run}`) },
      { premises: { address: "1 Beach Road" }, conditions: ["No amplified music after 22:00"], note: "private" },
    );
    expect((await applicant.post(`/requests/${draft.id}/submit`)).status).to.equal(200);
    const approved = await department.post(`/requests/${draft.id}/approve`, {
      remarks: "ok",
      reviewedDocuments: [draft.docs.SITE_PLAN],
    });
    expect(approved.status).to.equal(200);
    licence = draft;
    did = (await (await fetch(`${api}/.well-known/did.json`)).json()).id;
    const document = await resolveDidWeb(did);
    expect(document.assertionMethod).to.deep.equal([`${did}#credential-key-1`]);
    issuerJwk = document.verificationMethod.find((m: any) => m.id === `${did}#credential-key-1`).publicKeyJwk;
  });
  after(async () => driver?.close());

  it("publishes a did:web of PUBLIC_BASE_URL with one ES256 JsonWebKey for assertions", async function () {
    const host = new URL(current().api.url).host;
    expect(did).to.equal(`did:web:${host.replace(":", "%3A")}`);
    const document = await resolveDidWeb(did);
    expect(document.verificationMethod).to.have.length(1);
    expect(document.verificationMethod[0]).to.include({ type: "JsonWebKey", controller: did });
    expect(issuerJwk).to.include({ kty: "EC", crv: "P-256" });
    expect(issuerJwk).to.not.have.property("d");
  });

  it("keeps the signing key sealed by the vault, generated once: loading it again gives the DID's key", async function () {
    const { rows } = await driver.core.pool.query(`SELECT key_id, public_jwk, sealed_key FROM credential_keys`);
    expect(rows.map((r) => r.key_id)).to.deep.equal(["credential-key-1"]);
    expect(rows[0].public_jwk).to.deep.equal(issuerJwk);
    const opened = JSON.parse(
      secretSealer(driver.core.vault, "credential-signing-key").open("credential-key-1", rows[0].sealed_key),
    );
    expect(opened)
      .to.include({ ...issuerJwk })
      .and.to.have.property("d");
    expect(rows[0].sealed_key.toString("latin1")).to.not.include(opened.d);
    expect(() =>
      secretSealer(driver.core.vault, "webhook-secret").open("credential-key-1", rows[0].sealed_key),
    ).to.throw();
    expect((await loadCredentialKey(driver.core.pool, driver.core.vault)).publicJwk).to.deep.equal(issuerJwk);
  });

  it("vc+jwt: a VC 2.0 document signed by the DID's key, with the licence, its evidence, three status entries and the chain's validity", async function () {
    const response = await download("vc+jwt");
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.equal("application/vc+jwt");
    const jwt = await response.text();
    const { payload, protectedHeader } = await jwtVerify(jwt, await importJWK(issuerJwk, "ES256"), {
      typ: "vc+jwt",
      currentDate: new Date(1000 * (await chainSeconds())),
    });
    expect(protectedHeader).to.include({ alg: "ES256", kid: `${did}#credential-key-1` });
    const vc = payload as Record<string, any>;
    expect(vc["@context"][0]).to.equal("https://www.w3.org/ns/credentials/v2");
    expect(vc.type).to.deep.equal(["VerifiableCredential", "LicenceCredential"]);
    expect(vc.issuer).to.equal(did);
    expect(vc.credentialSubject).to.deep.equal({
      type: "Licence",
      licenceNumber: licence.requestNumber,
      licenceType: "BUILDING_PERMIT",
      premises: { address: "1 Beach Road" },
      conditions: ["No amplified music after 22:00"],
    });
    expect(jwt).to.not.include(Buffer.from(holderName).toString("base64url").slice(0, 12));
    expect(JSON.stringify(vc)).to.not.include("Wanda").and.not.include("private");
    // Validity is the chain's: issuance and expiry as the public verification reads them on chain.
    const verified = (await http(api).get(`/verify/${licence.tokenId}`)).body;
    expect(vc.validFrom).to.equal(verified.issuedAt);
    expect(vc.validUntil).to.equal(verified.expiresAt);
    // The JWT claims agree with the document, so a plain JWT verifier enforces the licence's validity too.
    expect(vc).to.include({ iss: did, nbf: Date.parse(vc.validFrom) / 1000, exp: Date.parse(vc.validUntil) / 1000 });
    const late = await jwtVerify(jwt, await importJWK(issuerJwk, "ES256"), {
      currentDate: new Date(Date.parse(vc.validUntil) + 1000),
    }).then(
      () => "accepted",
      (error: Error) => error.message,
    );
    expect(late).to.match(/"exp" claim timestamp check failed/);
    const [evidence] = vc.evidence;
    const bare = (hash: string) => hash.replace(/^0x/, "").toLowerCase();
    expect(evidence.documents.map((d: any) => bare(d.sha256))).to.deep.equal([bare(licence.hashes.SITE_PLAN)]);
    expect(evidence.decisions).to.have.length(1);
    expect(evidence.decisions[0]).to.include({ department: code, stage: 1, decision: "APPROVED" });
    expect(evidence.decisions[0].transactionHash).to.equal(verified.approvals[0].transactionHash);
    expect(evidence.decisionsDigest).to.match(/^0x[0-9a-f]{64}$/);
    const { list, index } = statusPosition(BigInt(licence.tokenId));
    const [revocation, suspension, token] = vc.credentialStatus;
    for (const [entry, purpose] of [
      [revocation, "revocation"],
      [suspension, "suspension"],
    ] as const) {
      expect(entry).to.include({
        type: "BitstringStatusListEntry",
        statusPurpose: purpose,
        statusListIndex: String(index),
        statusListCredential: `${current().api.url}/credentials/status/${list}/${purpose}`,
      });
    }
    expect(token).to.deep.include({
      type: "LicenceTokenStatusEntry",
      chainId: current().config.chainId,
      contractAddress: current().deployment.contracts.LicenceToken,
      tokenId: String(licence.tokenId),
    });
  });

  it("dc+sd-jwt: verified by the library with the DID's key and the live Token Status List; presents the licence number alone; expires with the chain", async function () {
    const response = await download("dc+sd-jwt");
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.equal("application/dc+sd-jwt");
    const credential = await response.text();
    expect(decodeProtectedHeader(credential.split("~")[0])).to.include({
      typ: "dc+sd-jwt",
      kid: `${did}#credential-key-1`,
    });
    const verifier = await sdJwtVerifier();
    const { payload } = await verifier.verify(credential, await atChain());
    // Its vct resolves to type metadata the library accepts, naming the holder's name as always disclosable.
    const typed = await new SDJwtVcInstance({
      verifier: await ES256.getVerifier(issuerJwk),
      hasher: digest,
      hashAlg: "sha-256",
      loadTypeMetadataFormat: true,
    }).verify(credential, await atChain());
    expect(typed.typeMetadata?.mergedTypeMetadata.vct).to.equal(payload.vct);
    expect(typed.typeMetadata?.mergedTypeMetadata.claims).to.deep.include({
      path: ["holder_name"],
      sd: "always",
      display: [{ locale: "en", label: "Holder" }],
    });
    expect(payload).to.include({
      iss: did,
      vct: `${current().api.url}/credentials/types/licence`,
      licence_number: licence.requestNumber,
      licence_type: "BUILDING_PERMIT",
      holder_name: holderName,
    });
    expect(payload.status?.status_list.idx).to.equal(statusPosition(BigInt(licence.tokenId)).index);
    // Validity is the chain's: a verifier's clock past the licence's expiry refuses the credential.
    const verified = (await http(api).get(`/verify/${licence.tokenId}`)).body;
    expect(payload.nbf).to.equal(Date.parse(verified.issuedAt) / 1000);
    expect(payload.exp).to.equal(Date.parse(verified.expiresAt) / 1000);
    const late = await verifier.verify(credential, { currentDate: payload.exp! + 1 }).then(
      () => "accepted",
      (error: Error) => error.message,
    );
    expect(late).to.match(/expired/);
    // The issuer-signed part names none of the disclosable claims.
    const signed = JSON.stringify(decodeJwt(credential.split("~")[0]));
    for (const hidden of [holderName, licence.requestNumber, "BUILDING_PERMIT", "Beach Road"])
      expect(signed).to.not.include(hidden);

    const presentation = await verifier.present(credential, { licence_number: true });
    const disclosed = presentation
      .split("~")
      .slice(1)
      .filter(Boolean)
      .map((part) => Buffer.from(part, "base64url").toString("utf8"));
    expect(disclosed).to.have.length(1);
    expect(presentation).to.not.include(Buffer.from(holderName).toString("base64url").slice(0, 8));
    expect(disclosed.join()).to.not.include(holderName);
    const shown = await verifier.verify(presentation, { requiredClaimKeys: ["licence_number"], ...(await atChain()) });
    expect(shown.payload.licence_number).to.equal(licence.requestNumber);
    expect(shown.payload).to.not.have.property("holder_name");
  });

  it("binds the SD-JWT VC to the holder's key (cnf): a key-binding presentation by that key passes, by another key fails", async function () {
    const holder = await ES256.generateKeyPair();
    const key = Buffer.from(JSON.stringify(holder.publicKey)).toString("base64url");
    const response = await fetch(
      `${api}/api/v1/requests/${licence.id}/credential?format=dc%2Bsd-jwt&holderKey=${key}`,
      { headers: { authorization: `Bearer ${applicantBearer}` } },
    );
    expect(response.status).to.equal(200);
    const bound = await response.text();
    const { payload } = await (await sdJwtVerifier()).verify(bound, await atChain());
    expect((payload.cnf as { jwk: JWK }).jwk).to.deep.equal(holder.publicKey);
    // The holder presents it with a key-binding JWT signed by that key; the verifier checks it against cnf.
    const wallet = new SDJwtVcInstance({
      hasher: digest,
      hashAlg: "sha-256",
      kbSigner: await ES256.getSigner(holder.privateKey),
      kbSignAlg: "ES256",
    });
    const nonce = `nonce-${run}`;
    const presented = await wallet.present(
      bound,
      { licence_number: true },
      { kb: { payload: { iat: Math.floor(Date.now() / 1000), aud: "https://inspector.example", nonce } } },
    );
    const keyChecked = new SDJwtVcInstance({
      verifier: await ES256.getVerifier(issuerJwk),
      kbVerifier: async (data, signature, signed) =>
        (await ES256.getVerifier((signed.cnf as { jwk: JWK }).jwk))(data, signature),
      hasher: digest,
      hashAlg: "sha-256",
    });
    expect(
      (await keyChecked.verify(presented, { keyBindingNonce: nonce, ...(await atChain()) })).kb?.payload.aud,
    ).to.equal("https://inspector.example");
    const stranger = await ES256.generateKeyPair();
    const forged = await new SDJwtVcInstance({
      hasher: digest,
      hashAlg: "sha-256",
      kbSigner: await ES256.getSigner(stranger.privateKey),
      kbSignAlg: "ES256",
    }).present(
      bound,
      { licence_number: true },
      { kb: { payload: { iat: Math.floor(Date.now() / 1000), aud: "x", nonce } } },
    );
    expect(
      await keyChecked.verify(forged, { keyBindingNonce: nonce, ...(await atChain()) }).then(
        () => "accepted",
        () => "refused",
      ),
    ).to.equal("refused");
    const privateKey = Buffer.from(JSON.stringify(holder.privateKey)).toString("base64url");
    const refused = await http(api, applicantBearer).get(
      `/requests/${licence.id}/credential?format=dc%2Bsd-jwt&holderKey=${privateKey}`,
    );
    expectError(refused, 400, "VALIDATION_ERROR");
  });

  it("status lists follow the chain: suspend → suspended, reinstate → valid, revoke → revoked", async function () {
    const { list, index } = statusPosition(BigInt(licence.tokenId));
    const credential = await (await download("dc+sd-jwt")).text();
    expect(await bitstringBit("revocation", list, index)).to.equal(0);
    expect(await bitstringBit("suspension", list, index)).to.equal(0);
    expect(await tokenStatus(list, index)).to.equal(0);
    const listResponse = await fetchList(list, "token-status");
    expect(listResponse.headers.get("cache-control")).to.equal("public, max-age=60");

    expect(
      (await admin.post(`/requests/${licence.id}/suspend`, { reasonCode: 3, reason: "inspection" })).status,
    ).to.equal(200);
    await eventually("the suspension in the lists", async () =>
      (await tokenStatus(list, index)) === 2 ? true : undefined,
    );
    expect(await bitstringBit("suspension", list, index)).to.equal(1);
    expect(await bitstringBit("revocation", list, index)).to.equal(0);
    const rejection = (verifying: Promise<unknown>) =>
      verifying.then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(await rejection((await sdJwtVerifier()).verify(credential, await atChain()))).to.match(
      /Status is not valid/,
    );
    // While suspended, no new credential is handed out.
    expectError(
      await http(api, applicantBearer).get(`/requests/${licence.id}/credential?format=vc%2Bjwt`),
      409,
      "LICENCE_NOT_VALID",
    );

    expect((await admin.post(`/requests/${licence.id}/reinstate`, {})).status).to.equal(200);
    await eventually("the reinstatement in the lists", async () =>
      (await tokenStatus(list, index)) === 0 ? true : undefined,
    );
    expect(await bitstringBit("suspension", list, index)).to.equal(0);
    await (await sdJwtVerifier()).verify(credential, await atChain());

    expect((await admin.post(`/requests/${licence.id}/revoke`, { reasonCode: 4, reason: "fraud" })).status).to.equal(
      200,
    );
    await eventually("the revocation in the lists", async () =>
      (await tokenStatus(list, index)) === 1 ? true : undefined,
    );
    expect(await bitstringBit("revocation", list, index)).to.equal(1);
    expect(await bitstringBit("suspension", list, index)).to.equal(0);
    expect(await rejection((await sdJwtVerifier()).verify(credential, await atChain()))).to.match(
      /Status is not valid/,
    );
  });

  it("answers every list up to the highest in use, and 404 beyond it", async function () {
    const { list } = statusPosition(BigInt(licence.tokenId));
    expect((await fetchList(list, "suspension")).status).to.equal(200);
    const beyond = await fetchList(list + 1, "revocation");
    expect(beyond.status).to.equal(404);
    expect((await beyond.json()).code).to.equal("NOT_FOUND");
    const unknownKind = await fetchList(list, "expiry");
    expect(unknownKind.status).to.equal(400);
  });

  it("refuses a request never issued (409), another applicant (404 as for the detail), an unknown format (400)", async function () {
    const draft = await draftRequest(applicant, "BUILDING_PERMIT", { SITE_PLAN: pdf(`wallet draft ${run}`) });
    const notIssued = await http(api, applicantBearer).get(`/requests/${draft.id}/credential?format=vc%2Bjwt`);
    expectError(notIssued, 409, "NOT_ISSUED");
    const otherBearer = await applicantToken(api, { id: `other-${run}`, name: "Otto Other" });
    const other = http(api, otherBearer);
    const detail = await other.get(`/requests/${licence.id}`);
    const foreign = await other.get(`/requests/${licence.id}/credential?format=vc%2Bjwt`);
    expect(foreign.status).to.equal(detail.status).and.to.be.oneOf([403, 404]);
    expect(foreign.body.code).to.equal(detail.body.code);
    expectError(await http(api).get(`/requests/${licence.id}/credential?format=vc%2Bjwt`), 401);
    const unknown = await http(api, applicantBearer).get(`/requests/${licence.id}/credential?format=mso_mdoc`);
    expectError(unknown, 400, "VALIDATION_ERROR");
  });
});
