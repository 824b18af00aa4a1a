/**
 * OID4VCI pre-authorized delivery of the licence, on the real stack, taken by a wallet written with the same
 * libraries' client side (Openid4vciClient, the oauth2 client inside it): it resolves the offer by reference,
 * redeems the code, takes a nonce, proves a fresh key and receives both formats. Each credential is then checked
 * the way an outside verifier would (the issuer's key from its did:web document) and found bound to that key. The
 * holder without a sign-in gets the same offer by presenting the holder proof (identity and salt).
 */
import { createHash, randomBytes } from "node:crypto";
import { expect } from "chai";
import { CompactSign, exportJWK, generateKeyPair, importJWK, jwtVerify, type CryptoKey, type JWK } from "jose";
import { digest, ES256 } from "@sd-jwt/crypto-nodejs";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { clientAuthenticationAnonymous, setGlobalConfig, type Jwk } from "@openid4vc/oauth2";
import { Openid4vciClient, type IssuerMetadataResult } from "@openid4vc/openid4vci";
import { didJwk, ed25519DidKey, p256DidKey } from "../unit/support/walletDids.ts";
import { applicantToken } from "./support/authClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as http, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { productionEnv } from "./support/productionEnv.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession, departmentSession, letters, type Applicant } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { draftRequest } from "./support/submittedRequest.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

const SD_JWT = "licence_dc_sd_jwt";
const JWT_VC = "licence_jwt_vc_json";

/** A wallet: the library's client, signing proofs with whichever key `signWith` names (another key, to cheat). */
function wallet() {
  const state: { signWith?: CryptoKey } = {};
  const client = new Openid4vciClient({
    callbacks: {
      fetch,
      generateRandom: (bytes) => randomBytes(bytes),
      hash: (data, alg) => createHash(alg.replace("-", "")).update(data).digest(),
      clientAuthentication: clientAuthenticationAnonymous(),
      signJwt: async (signer, { header, payload }) => {
        const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
          .setProtectedHeader(header as never)
          .sign(state.signWith!);
        return { jwt, signerJwk: (signer as { publicJwk: Jwk }).publicJwk };
      },
    },
  });
  return { client, state };
}

async function holderKey() {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  return { publicJwk: (await exportJWK(publicKey)) as Jwk, privateKey };
}

describe("OID4VCI: a wallet takes the licence by a pre-authorized offer (real stack)", function () {
  const run = `${Date.now() % 1e7}`;
  const code = `OFFER_${letters(run)}`;
  let driver: Driver;
  let api: string;
  let applicant: Applicant;
  let other: ReturnType<typeof http>;
  let licence: { id: string };
  let draft: { id: string };
  let issuerJwk: JWK;
  let applicantBearer: string;
  let admin: ReturnType<typeof http>;

  const offer = async (requestId = licence.id, client: ReturnType<typeof http> = applicant) =>
    client.post(`/requests/${requestId}/credential-offer`);
  const tokenRequest = (preAuthorizedCode: string) =>
    fetch(`${api}/oid4vci/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:pre-authorized_code",
        "pre-authorized_code": preAuthorizedCode,
      }),
    });
  const codeOf = (body: any): string =>
    body.credentialOffer.grants["urn:ietf:params:oauth:grant-type:pre-authorized_code"]["pre-authorized_code"];

  // The holder proof (identity and salt), presented without a sign-in.
  type Proof = { tokenId: number; applicantId: string; salt: string };
  const proofOf = async (requestId: string) =>
    (await applicant.get(`/requests/${requestId}/identity-proof`)).body as Proof;
  const holderOffer = (tokenId: number, { applicantId, salt }: Omit<Proof, "tokenId">, headers = {}, url = api) =>
    http(url).post(`/verify/holder/${tokenId}/credential-offer`, { applicantId, salt }, headers);
  const flipped = (salt: string) => `0x${(BigInt(salt) ^ 1n).toString(16).padStart(64, "0")}`;

  /** Offer → metadata → token → nonce: what a wallet has before it proves its key. */
  async function redeemed(w = wallet(), create = () => offer()) {
    const created = await create();
    expect(created.status).to.equal(201);
    const credentialOffer = await w.client.resolveCredentialOffer(created.body.credentialOfferReferenceUri);
    const issuerMetadata = await w.client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const { accessTokenResponse } = await w.client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
    });
    const { c_nonce } = await w.client.requestNonce({ issuerMetadata });
    return { ...w, created, credentialOffer, issuerMetadata, accessToken: accessTokenResponse.access_token, c_nonce };
  }

  async function proof(
    w: { client: Openid4vciClient; state: { signWith?: CryptoKey } },
    issuerMetadata: IssuerMetadataResult,
    nonce: string,
    key: Awaited<ReturnType<typeof holderKey>>,
    configuration = SD_JWT,
    didUrl?: string, // the kid naming the key, instead of the key itself (jwk)
  ) {
    w.state.signWith ??= key.privateKey;
    const { jwt } = await w.client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: configuration,
      nonce,
      signer: didUrl
        ? { method: "did", alg: "ES256", didUrl }
        : { method: "jwk", alg: "ES256", publicJwk: key.publicJwk },
    });
    return jwt;
  }

  const credentialRequest = (accessToken: string, body: unknown) =>
    fetch(`${api}/oid4vci/credential`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const sendProof = async (accessToken: string, jwt: string) => {
    const response = await credentialRequest(accessToken, {
      credential_configuration_id: SD_JWT,
      proofs: { jwt: [jwt] },
    });
    return { status: response.status, body: await response.json() };
  };

  before(async function () {
    setGlobalConfig({ allowInsecureUrls: true }); // the test stack has no TLS
    const stack = current();
    driver = await createDriver(stack);
    const { api: url, adminToken, admin: adminClient } = await adminSession(stack);
    admin = adminClient;
    api = url;
    const department = (await departmentSession(api, adminToken, { code, name: "Offer Office" })).client;
    await seedWorkflow(
      stack,
      driver,
      workflow("BUILDING_PERMIT", "Offer licence", stage("check", "Check", "SEQUENTIAL", { [code]: ["SITE_PLAN"] })),
    );
    applicantBearer = await applicantToken(api, { id: `offer-${run}`, name: "Olive Offer" });
    applicant = { ...http(api, applicantBearer), id: `offer-${run}` };
    other = http(api, await applicantToken(api, { id: `offer-other-${run}`, name: "Otto Other" }));
    const issued = await draftRequest(applicant, "BUILDING_PERMIT", { SITE_PLAN: pdf(`offer ${run}`) });
    expect((await applicant.post(`/requests/${issued.id}/submit`)).status).to.equal(200);
    const approved = await department.post(`/requests/${issued.id}/approve`, {
      remarks: "ok",
      reviewedDocuments: [issued.docs.SITE_PLAN],
    });
    expect(approved.status).to.equal(200);
    licence = issued;
    draft = await draftRequest(applicant, "BUILDING_PERMIT", { SITE_PLAN: pdf(`offer draft ${run}`) });
    const did = await (await fetch(`${api}/.well-known/did.json`)).json();
    issuerJwk = did.verificationMethod[0].publicKeyJwk;
  });
  after(async () => driver?.close());

  it("publishes issuer and authorization server metadata for both formats, ES256 proofs, at PUBLIC_BASE_URL", async function () {
    const issuer = await (await fetch(`${api}/.well-known/openid-credential-issuer`)).json();
    expect(issuer).to.include({
      credential_issuer: api,
      credential_endpoint: `${api}/oid4vci/credential`,
      nonce_endpoint: `${api}/oid4vci/nonce`,
    });
    const configurations = issuer.credential_configurations_supported;
    expect(configurations[SD_JWT]).to.include({ format: "dc+sd-jwt", vct: `${api}/credentials/types/licence` });
    expect(configurations[JWT_VC].format).to.equal("jwt_vc_json");
    expect(configurations[JWT_VC].credential_definition.type).to.deep.equal([
      "VerifiableCredential",
      "LicenceCredential",
    ]);
    for (const configuration of Object.values<any>(configurations))
      expect(configuration.proof_types_supported.jwt.proof_signing_alg_values_supported).to.deep.equal(["ES256"]);
    const server = await (await fetch(`${api}/.well-known/oauth-authorization-server`)).json();
    expect(server).to.include({ issuer: api, token_endpoint: `${api}/oid4vci/token` });
    expect(server.grant_types_supported).to.deep.equal(["urn:ietf:params:oauth:grant-type:pre-authorized_code"]);
  });

  it("delivers both formats to the library's wallet, each signed by the DID's key and bound to the proof's key", async function () {
    const w = await redeemed();
    const { created, credentialOffer, issuerMetadata, accessToken } = w;
    expect(created.body.qrSvg).to.match(/^<svg/);
    expect(created.body.credentialOfferUri).to.match(/^openid-credential-offer:\/\/\?credential_offer=/);
    expect(credentialOffer.credential_configuration_ids).to.have.members([SD_JWT, JWT_VC]);
    expect(Date.parse(created.body.expiresAt) - Date.now()).to.be.within(9 * 60_000, 10 * 60_000);
    const key = await holderKey();

    const sd = await w.client.retrieveCredentials({
      issuerMetadata,
      accessToken,
      credentialConfigurationId: SD_JWT,
      proofs: { jwt: [await proof(w, issuerMetadata, w.c_nonce, key)] },
    });
    const sdJwt = (sd.credentialResponse.credentials![0] as { credential: string }).credential;
    const verifier = new SDJwtVcInstance({
      verifier: await ES256.getVerifier(issuerJwk),
      hasher: digest,
      hashAlg: "sha-256",
    });
    // At the chain's time: the suite's chain runs ahead of this clock, and validFrom is the chain's issuance time.
    const chainNow = Math.max(Math.floor(Date.now() / 1000), await driver.core.gateway.latestBlockTime());
    const { payload } = await verifier.verify(sdJwt, { currentDate: chainNow });
    expect(payload).to.include({ vct: `${api}/credentials/types/licence`, holder_name: "Olive Offer" });
    expect((payload.cnf as { jwk: JWK }).jwk).to.deep.equal(key.publicJwk);

    // The same access token, a new nonce, the W3C format.
    const { c_nonce } = await w.client.requestNonce({ issuerMetadata });
    const vc = await w.client.retrieveCredentials({
      issuerMetadata,
      accessToken,
      credentialConfigurationId: JWT_VC,
      proofs: { jwt: [await proof(w, issuerMetadata, c_nonce, key, JWT_VC)] },
    });
    const vcJwt = (vc.credentialResponse.credentials![0] as { credential: string }).credential;
    const verified = await jwtVerify(vcJwt, await importJWK(issuerJwk, "ES256"), {
      typ: "vc+jwt",
      currentDate: new Date(
        1000 * Math.max(Math.floor(Date.now() / 1000), await driver.core.gateway.latestBlockTime()),
      ),
    });
    expect((verified.payload as any).credentialSubject.type).to.equal("Licence");
    expect((verified.payload.cnf as { jwk: JWK }).jwk).to.deep.equal(key.publicJwk);
  });

  it("refuses a reused pre-authorized code, and an expired one, with invalid_grant; the offer URI is then gone", async function () {
    const created = await offer();
    const preAuthorizedCode = codeOf(created.body);
    expect((await tokenRequest(preAuthorizedCode)).status).to.equal(200);
    const reused = await tokenRequest(preAuthorizedCode);
    expect(reused.status).to.equal(400);
    expect(reused.headers.get("cache-control")).to.equal("no-store");
    expect((await reused.json()).error).to.equal("invalid_grant");
    expect((await fetch(created.body.credentialOfferReference)).status).to.equal(404);

    const late = await offer();
    const lateCode = codeOf(late.body);
    expect((await fetch(late.body.credentialOfferReference)).status).to.equal(200);
    const hash = createHash("sha256").update(lateCode).digest();
    const { rows } = await driver.core.pool.query(
      `UPDATE credential_offers SET expires_at = now() - interval '1 second' WHERE code_hash = $1 RETURNING request_id`,
      [hash],
    );
    expect(rows).to.deep.equal([{ request_id: licence.id }]);
    expect((await fetch(late.body.credentialOfferReference)).status).to.equal(404);
    const expired = await tokenRequest(lateCode);
    expect(expired.status).to.equal(400);
    expect(await expired.json()).to.deep.include({ error: "invalid_grant" });
    // Only the hash is stored.
    const stored = await driver.core.pool.query(`SELECT * FROM credential_offers WHERE request_id = $1`, [licence.id]);
    expect(JSON.stringify(stored.rows)).to.not.include(lateCode);
  });

  it("refuses a proof with a nonce it never gave (invalid_nonce), signed by another key (invalid_proof), or reusing a nonce", async function () {
    const w = await redeemed();
    const key = await holderKey();
    const send = (jwt: string) => sendProof(w.accessToken, jwt);
    const wrongNonce = await send(await proof(w, w.issuerMetadata, "not-a-nonce-we-gave", key));
    expect(wrongNonce).to.deep.include({ status: 400 });
    expect(wrongNonce.body.error).to.equal("invalid_nonce");

    // The header names one key, another key signs.
    const cheat = wallet();
    cheat.state.signWith = (await holderKey()).privateKey;
    const forged = await send(await proof(cheat, w.issuerMetadata, w.c_nonce, key));
    expect(forged.status).to.equal(400);
    expect(forged.body.error).to.equal("invalid_proof");

    // The nonce survived the refused proofs, is spent by the good one, and refused after.
    const good = await proof(w, w.issuerMetadata, w.c_nonce, key);
    expect((await send(good)).status).to.equal(200);
    expect((await send(good)).body.error).to.equal("invalid_nonce");

    const unknown = await credentialRequest(w.accessToken, {
      credential_configuration_id: "nope",
      proofs: { jwt: [good] },
    });
    expect(unknown.status).to.equal(400);
    expect((await unknown.json()).error).to.match(/^(invalid_credential_request|unknown_credential_configuration)$/);
  });

  it("takes a proof whose kid names a P-256 key by did:jwk or did:key: the credential is bound to that key", async function () {
    const metadata = await (await fetch(`${api}/.well-known/openid-credential-issuer`)).json();
    for (const configuration of Object.values<any>(metadata.credential_configurations_supported))
      expect(configuration.cryptographic_binding_methods_supported).to.deep.equal(["jwk", "did:jwk", "did:key"]);
    const w = await redeemed();
    const verifier = new SDJwtVcInstance({
      verifier: await ES256.getVerifier(issuerJwk),
      hasher: digest,
      hashAlg: "sha-256",
    });
    const named = {
      "did:jwk": (jwk: Jwk) => `${didJwk(jwk)}#0`,
      "did:key": (jwk: Jwk) => `${p256DidKey(jwk)}#${p256DidKey(jwk).slice("did:key:".length)}`,
    };
    for (const [method, kid] of Object.entries(named)) {
      const key = await holderKey();
      w.state.signWith = key.privateKey;
      const { c_nonce } = await w.client.requestNonce({ issuerMetadata: w.issuerMetadata });
      const jwt = await proof(w, w.issuerMetadata, c_nonce, key, SD_JWT, kid(key.publicJwk));
      const response = await sendProof(w.accessToken, jwt);
      expect(response.status, method).to.equal(200);
      const chainNow = Math.max(Math.floor(Date.now() / 1000), await driver.core.gateway.latestBlockTime());
      const { payload } = await verifier.verify(response.body.credentials[0].credential, { currentDate: chainNow });
      expect((payload.cnf as { jwk: JWK }).jwk, method).to.deep.equal(key.publicJwk);
    }
  });

  it("refuses a proof whose kid is an Ed25519 did:key, a did:web, or the DID of a key that did not sign it (invalid_proof); the nonce survives", async function () {
    const w = await redeemed();
    const key = await holderKey();
    const ed25519 = (await exportJWK((await generateKeyPair("Ed25519")).publicKey)) as Jwk;
    const refused = {
      [ed25519DidKey(ed25519)]: /P-256/,
      "did:web:wallet.example#key-1": /did:jwk and did:key/,
      [p256DidKey((await holderKey()).publicJwk)]: /proof/,
    };
    for (const [kid, description] of Object.entries(refused)) {
      const response = await sendProof(w.accessToken, await proof(w, w.issuerMetadata, w.c_nonce, key, SD_JWT, kid));
      expect(response.status, kid).to.equal(400);
      expect(response.body.error, kid).to.equal("invalid_proof");
      expect(response.body.error_description, kid).to.match(description);
    }
    const good = await proof(w, w.issuerMetadata, w.c_nonce, key, SD_JWT, p256DidKey(key.publicJwk));
    expect((await sendProof(w.accessToken, good)).status).to.equal(200);
    expect((await sendProof(w.accessToken, good)).body.error).to.equal("invalid_nonce");
  });

  it("refuses no token, an API token or a forged access token at the credential endpoint with invalid_token", async function () {
    for (const token of [applicantBearer, "not.a.token"]) {
      const response = await credentialRequest(token, { credential_configuration_id: SD_JWT });
      expect(response.status).to.equal(401);
      expect(response.headers.get("www-authenticate")).to.match(/^Bearer error="invalid_token"/);
      expect((await response.json()).error).to.equal("invalid_token");
    }
    const anonymous = await fetch(`${api}/oid4vci/credential`, { method: "POST" });
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers.get("www-authenticate")).to.match(/^Bearer error="invalid_token"/);
  });

  it("offers only to the licence's holder (404 for another applicant) and only an issued licence (409 NOT_ISSUED)", async function () {
    expectError(await offer(licence.id, other), 404, "NOT_FOUND");
    expectError(await offer(draft.id), 409, "NOT_ISSUED");
    expect((await offer(licence.id, http(api))).status).to.equal(401);
  });

  it("offers the same to whoever presents the holder proof, without a sign-in: the wallet redeems it once into a credential bound to its key", async function () {
    const mine = await proofOf(licence.id);
    const w = await redeemed(wallet(), () => holderOffer(mine.tokenId, mine));
    expect(w.created.status).to.equal(201);
    expect(w.created.headers.get("cache-control")).to.equal("no-store");
    expect(Object.keys(w.created.body)).to.have.members(Object.keys((await offer()).body));
    expect(w.created.body.qrSvg).to.match(/^<svg/);
    const key = await holderKey();
    const sd = await w.client.retrieveCredentials({
      issuerMetadata: w.issuerMetadata,
      accessToken: w.accessToken,
      credentialConfigurationId: SD_JWT,
      proofs: { jwt: [await proof(w, w.issuerMetadata, w.c_nonce, key)] },
    });
    const verifier = new SDJwtVcInstance({
      verifier: await ES256.getVerifier(issuerJwk),
      hasher: digest,
      hashAlg: "sha-256",
    });
    const chainNow = Math.max(Math.floor(Date.now() / 1000), await driver.core.gateway.latestBlockTime());
    const { payload } = await verifier.verify(
      (sd.credentialResponse.credentials![0] as { credential: string }).credential,
      {
        currentDate: chainNow,
      },
    );
    expect(payload).to.include({
      holder_name: "Olive Offer",
      licence_number: (await applicant.get(`/requests/${licence.id}`)).body.requestNumber,
    });
    expect((payload.cnf as { jwk: JWK }).jwk).to.deep.equal(key.publicJwk);
    // Single-use, as the applicant's.
    const again = await tokenRequest(codeOf(w.created.body));
    expect(again.status).to.equal(400);
    expect((await again.json()).error).to.equal("invalid_grant");
  });

  it("holder proof: a wrong salt or another token's pair is 403 HOLDER_MISMATCH, no such licence 404, a licence not issued 409 NOT_ISSUED; no offer is stored", async function () {
    const mine = await proofOf(licence.id);
    const draftProof = await proofOf(draft.id);
    const stored = async () =>
      (
        await driver.core.pool.query(`SELECT count(*)::int AS n FROM credential_offers WHERE request_id = ANY($1)`, [
          [licence.id, draft.id],
        ])
      ).rows[0].n;
    const before = await stored();
    expectError(await holderOffer(mine.tokenId, { ...mine, salt: flipped(mine.salt) }), 403, "HOLDER_MISMATCH");
    expectError(
      await holderOffer(mine.tokenId, { ...mine, applicantId: `${mine.applicantId}x` }),
      403,
      "HOLDER_MISMATCH",
    );
    expectError(await holderOffer(mine.tokenId, draftProof), 403, "HOLDER_MISMATCH");
    expectError(await holderOffer(2 ** 40 - 1, mine), 404, "NOT_FOUND");
    expectError(await holderOffer(draftProof.tokenId, draftProof), 409, "NOT_ISSUED");
    expectError(await holderOffer(mine.tokenId, { ...mine, salt: "0x1234" }), 400, "VALIDATION_ERROR");
    expect(await stored()).to.equal(before);
  });

  it("holder proof: a wrong pair counts as a failed credential: spent from an address, even the right pair is refused there, not elsewhere", async function () {
    const mine = await proofOf(licence.id);
    const stack = current();
    const limited = await stack.startExtraApi(
      undefined,
      await productionEnv(stack, { TRUST_PROXY_HOPS: "1", RATE_LIMIT_AUTH_PER_MINUTE: "2" }),
    );
    try {
      const here = { "x-forwarded-for": "198.51.100.27" };
      const wrong = { ...mine, salt: flipped(mine.salt) };
      for (let i = 0; i < 2; i++)
        expectError(await holderOffer(mine.tokenId, wrong, here, limited.url), 403, "HOLDER_MISMATCH");
      expectError(await holderOffer(mine.tokenId, mine, here, limited.url), 429, "RATE_LIMITED");
      const elsewhere = { "x-forwarded-for": "198.51.100.28" };
      expect((await holderOffer(mine.tokenId, mine, elsewhere, limited.url)).status).to.equal(201);
    } finally {
      await limited.stop();
    }
  });

  // Last: it suspends the licence.
  it("denies the credential of a licence suspended after its offer was redeemed (credential_request_denied), and offers no more", async function () {
    const w = await redeemed();
    const jwt = await proof(w, w.issuerMetadata, w.c_nonce, await holderKey());
    expect(
      (await admin.post(`/requests/${licence.id}/suspend`, { reasonCode: 3, reason: "inspection" })).status,
    ).to.equal(200);
    await eventually("the suspension in the index", async () => ((await offer()).status === 409 ? true : undefined));
    expectError(await offer(), 409, "LICENCE_NOT_VALID");
    const response = await credentialRequest(w.accessToken, {
      credential_configuration_id: SD_JWT,
      proofs: { jwt: [jwt] },
    });
    expect(response.status).to.equal(400);
    expect(await response.json()).to.deep.include({ error: "credential_request_denied" });
  });
});
