// The public verification page: four ways in (token number, QR code, document, a wallet's credential), one verdict
// out. Talks only to this server's public /api/v1/verify endpoints; documents are hashed here and never uploaded.
"use strict";

const API = "/api/v1/verify";
const $ = (id) => document.getElementById(id);

const VERDICTS = {
  VALID: ["Valid licence", "ok"],
  NOT_ISSUED: ["Not issued", "warn"],
  EXPIRED: ["Expired", "bad"],
  SUSPENDED: ["Suspended", "bad"],
  REVOKED: ["Revoked", "bad"],
  INVALID_QR: ["Invalid QR code", "bad"],
  INVALID_CREDENTIAL: ["Invalid credential", "bad"],
  UNKNOWN: ["No such licence", "bad"],
};
const DOCUMENT_VERDICTS = {
  VALID: ["Genuine document", "ok"],
  SUPERSEDED: ["Out of date", "warn"],
  UNKNOWN: ["Not recorded", "bad"],
};

function showTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(selected));
    $(tab.dataset.panel).hidden = !selected;
  }
}

const words = (code) => code && code.replaceAll("_", " ").toLowerCase();
const day = (iso) =>
  iso ? new Date(iso).toLocaleDateString(undefined, { year: "numeric", month: "long", day: "numeric" }) : "—";

function render({ verdict, kind, message, details = [], approvals, proof = [] }) {
  const [label, tone] = (kind === "document" ? DOCUMENT_VERDICTS : VERDICTS)[verdict] || [verdict, "bad"];
  const box = $("verdict");
  box.textContent = label;
  box.className = `verdict ${tone}`;
  box.dataset.verdict = verdict;
  $("message").textContent = message || "";
  fill($("details"), details);
  $("approvals-block").hidden = !approvals || approvals.length === 0;
  // The API numbers stages from 1, as the workflow's stageOrder.
  const approval = (a) => `${a.departmentName} — stage ${a.stage} — ${day(a.approvedAt)}${signedByText(a)}`;
  $("approvals").replaceChildren(...(approvals || []).map((a) => text("li", approval(a))));
  $("credential-block").hidden = true;
  $("proof-block").hidden = proof.length === 0;
  fill($("proof"), proof);
  $("result").hidden = false;
  $("result").scrollIntoView({ behavior: "smooth", block: "start" });
}

/** Who could sign the approval, in words (the API's signedBy). */
function signedByText(a) {
  const reviewers = ` — signed by the department's reviewers with their own passkeys (${a.reviewerThreshold} needed)`;
  const key = " — signed with the department's own key";
  const platform = " — signed by the platform for the department";
  return { DEPARTMENT_REVIEWERS: reviewers, DEPARTMENT_KEY: key, PLATFORM: platform }[a.signedBy] ?? "";
}

const text = (tag, content) => Object.assign(document.createElement(tag), { textContent: content });

function fill(list, rows) {
  const shown = rows.filter(([, value]) => value !== null && value !== undefined && value !== "");
  list.replaceChildren(...shown.flatMap(([term, value]) => [text("dt", term), text("dd", String(value))]));
}

// The licence shown, for the holder check; the identity and salt last found to open its commitment.
let shownTokenId = null;
let holderProof = null;

function renderLicence(answer) {
  shownTokenId = answer.tokenId ?? null;
  $("holder-form").hidden = shownTokenId === null;
  $("holder-result").textContent = "";
  showWallet(null);
  render({
    verdict: answer.verdict,
    message: answer.message,
    details: [
      ["Licence number", answer.requestNumber],
      ["Type", TYPE_NAMES[answer.requestType] || words(answer.requestType)],
      ["Holder", answer.applicantName],
      ["Status", words(answer.status)],
      ["Issued", answer.issuedAt && day(answer.issuedAt)],
      ["Valid until", answer.issuedAt ? (answer.expiresAt ? day(answer.expiresAt) : "no expiry") : null],
    ],
    approvals: answer.approvals,
    proof: answer.blockchainProof
      ? [
          ["Chain", answer.blockchainProof.chainId],
          ["Contract", answer.blockchainProof.contractAddress],
          ["Token", answer.blockchainProof.tokenId],
          ["Holder address", answer.blockchainProof.ownerAddress],
          ["Transaction", answer.blockchainProof.transactionHash],
          ["QR signed by", answer.qr && answer.qr.issuer],
        ]
      : [],
  });
}

/** The claims' names in plain words, as both formats spell them. */
const CLAIM_NAMES = {
  licenceNumber: "Licence number",
  licence_number: "Licence number",
  licenceType: "Type",
  licence_type: "Type",
  holder_name: "Holder",
  premises: "Premises",
  conditions: "Conditions",
};
const LIST_ANSWERS = { 0: "valid", 1: "revoked", 2: "suspended" };

function renderCredential(answer) {
  renderLicence(answer);
  const c = answer.credential;
  const bit = (value, yes) => (value === null ? null : value ? yes : `not ${yes}`);
  const status = c.status && [bit(c.status.revocation, "revoked"), bit(c.status.suspension, "suspended")];
  fill($("credential"), [
    ["Format", c.format === "dc+sd-jwt" ? "SD-JWT VC (selective disclosure)" : c.format && "W3C VC (vc+jwt)"],
    ["Issuer", c.issuer],
    ["Signature", c.signatureValid ? "the platform's" : "not the platform's"],
    [
      "Status list",
      c.status && (c.status.tokenStatus !== null ? LIST_ANSWERS[c.status.tokenStatus] : status.join(", ")),
    ],
    ["Valid", c.validFrom && `${day(c.validFrom)} – ${c.validUntil ? day(c.validUntil) : "no expiry"}`],
    ["Key binding", c.keyBinding && `signed by the holder's key${c.keyBinding.aud ? ` for ${c.keyBinding.aud}` : ""}`],
  ]);
  const shown = (value) => (typeof value === "string" ? value : JSON.stringify(value));
  const disclosed = Object.entries(c.disclosed).filter(([name]) => name !== "type");
  fill(
    $("disclosed"),
    disclosed.length ? disclosed.map(([name, value]) => [CLAIM_NAMES[name] || name, shown(value)]) : [["—", "nothing"]],
  );
  $("credential-block").hidden = false;
}

async function verifyCredential(value) {
  const { status, body } = await ask("credential", { credential: value.trim() });
  if (status === 200) renderCredential(body);
  else render(problem(status, body, "credential"));
}

function renderDocument(answer) {
  $("holder-form").hidden = true;
  render({
    kind: "document",
    verdict: answer.verdict,
    message: answer.message,
    details: [
      ["Document type", words(answer.docType)],
      ["Version", answer.version],
      ["Recorded", day(answer.uploadedAt)],
      ["Licence (token) number", answer.tokenId],
    ],
    proof: [
      ["Contract", answer.blockchainRecord.contractAddress],
      ["Block", answer.blockchainRecord.blockNumber],
      ["Transaction", answer.blockchainRecord.transactionHash],
    ],
  });
}

/** The request types' names in plain words (the identifiers keep the specification's spelling). */
const TYPE_NAMES = {
  RESORT_LICENSE: "resort licence",
  TRADE_LICENSE: "trade licence",
  BUILDING_PERMIT: "building permit",
};

/** GET (or, with a body, POST) one of the public verification endpoints. */
async function ask(path, body) {
  const response = await fetch(`${API}/${path}`, {
    headers: { accept: "application/json", ...(body && { "content-type": "application/json" }) },
    ...(body && { method: "POST", body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json().catch(() => ({})) };
}

function problem(status, body, what) {
  if (status === 404) return { verdict: "UNKNOWN", message: body.message || `No ${what} matches.` };
  if (status === 400)
    return { verdict: "UNKNOWN", message: `That is not a valid ${what}. ${body.message || ""}`.trim() };
  return { verdict: "UNKNOWN", message: "The verification service could not answer. Please try again shortly." };
}

async function verifyToken(value) {
  const token = String(value).trim().toUpperCase();
  if (!/^\d{1,13}$|^[A-Z]{2}-\d{4}-\d{6,12}$/.test(token)) {
    const message = "Enter the licence number as printed (e.g. RL-2026-000001) or its token number.";
    return render(problem(400, { message }, "licence number"));
  }
  const { status, body } = await ask(encodeURIComponent(token));
  if (status === 200) renderLicence(body);
  else render(problem(status, body, "licence"));
}

async function checkHolder() {
  const salt = $("holder-salt").value.trim();
  const out = $("holder-result");
  if (!/^0x[0-9a-fA-F]{64}$/.test(salt)) {
    out.textContent = "The salt is 0x followed by 64 hexadecimal digits.";
    out.dataset.matches = "invalid";
    return;
  }
  const proof = { applicantId: $("holder-id").value.trim(), salt };
  showWallet(null);
  const { status, body } = await ask(`holder/${shownTokenId}`, proof);
  if (status !== 200) {
    out.textContent = body.message || "The check could not be made. Please try again shortly.";
    out.dataset.matches = "error";
    return;
  }
  out.dataset.matches = String(body.matches);
  out.textContent = body.matches
    ? "Match: this identity and salt open the commitment recorded on the blockchain for this licence."
    : "No match: this identity and salt do not open the commitment recorded for this licence.";
  if (body.matches) showWallet(proof);
}

/** The "Add to your wallet" offer, for a matching holder proof (null hides it). */
function showWallet(proof) {
  holderProof = proof;
  $("wallet-block").hidden = proof === null;
  $("wallet-offer-shown").hidden = true;
  $("wallet-result").textContent = "";
}

async function offerToWallet() {
  const out = $("wallet-result");
  const { status, body } = await ask(`holder/${shownTokenId}/credential-offer`, holderProof);
  if (status !== 201) {
    out.textContent = body.message || "The offer could not be made. Please try again shortly.";
    return;
  }
  // The QR code comes as SVG text: shown as a data: image, which the page's policy allows (img-src data:).
  $("wallet-qr").src = `data:image/svg+xml,${encodeURIComponent(body.qrSvg)}`;
  $("wallet-link").href = body.credentialOfferReferenceUri;
  $("wallet-offer-shown").hidden = false;
  const until = new Date(body.expiresAt).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  out.textContent = `Scan the code with your wallet app, or open the link on this device, before ${until}. It works once.`;
}

async function verifyQr(value) {
  // A code that holds a credential itself (a compact JWS: base64url JSON begins "eyJ") is verified as one.
  if (/^\s*eyJ/.test(value)) return verifyCredential(value);
  const { status, body } = await ask(`qr/${encodeURIComponent(value.trim())}`);
  if (status === 200) renderLicence(body);
  else if (status === 400) render({ verdict: "INVALID_QR", message: "This is not a licence QR code." });
  else render(problem(status, body, "licence"));
}

const NOT_RECORDED = `This exact file is not recorded on the blockchain: it is not a document of any licence, or it was changed.`;

async function verifyFile(file) {
  $("document-hash").hidden = false;
  $("document-hash").textContent = `Fingerprinting ${file.name}…`;
  const bytes = new Uint8Array(await file.arrayBuffer());
  const hash = await sha256Hex(bytes);
  $("document-hash").textContent = `SHA-256 ${hash}`;
  const { status, body } = await ask(`document/${hash}`);
  if (status === 200) renderDocument(body);
  else if (status === 404) render({ kind: "document", verdict: "UNKNOWN", message: NOT_RECORDED });
  else render(problem(status, body, "document"));
}

async function sha256Hex(bytes) {
  // WebCrypto needs a secure context (https or localhost); elsewhere, the same digest in plain JavaScript.
  const digest =
    globalThis.crypto && crypto.subtle
      ? new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))
      : sha256Fallback(bytes);
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function sha256Fallback(data) {
  // The constants as FIPS 180-4 defines them: the first 32 bits of the fractional parts of the cube roots of the
  // first 64 primes (K) and of the square roots of the first 8 (H).
  const primes = [];
  for (let n = 2; primes.length < 64; n++) if (primes.every((p) => n % p)) primes.push(n);
  const fraction = (x) => ((x - Math.floor(x)) * 2 ** 32) >>> 0;
  const K = new Uint32Array(primes.map((p) => fraction(Math.cbrt(p))));
  const H = new Uint32Array(primes.slice(0, 8).map((p) => fraction(Math.sqrt(p))));
  const length = data.length;
  const padded = new Uint8Array(((length + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length << 3) >>> 0);
  const W = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let t = 0; t < 16; t++) W[t] = view.getUint32(offset + t * 4);
    for (let t = 16; t < 64; t++) {
      const s0 = rotr(W[t - 15], 7) ^ rotr(W[t - 15], 18) ^ (W[t - 15] >>> 3);
      const s1 = rotr(W[t - 2], 17) ^ rotr(W[t - 2], 19) ^ (W[t - 2] >>> 10);
      W[t] = (W[t - 16] + s0 + W[t - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let t = 0; t < 64; t++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + W[t]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [h, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, h].forEach((v, i) => (H[i] = (H[i] + v) >>> 0));
  }
  const out = new Uint8Array(32);
  H.forEach((v, i) => new DataView(out.buffer).setUint32(i * 4, v));
  return out;
}

async function startScan() {
  // The camera path exists only where the browser can read QR codes itself (BarcodeDetector).
  const video = $("qr-video");
  const detector = new BarcodeDetector({ formats: ["qr_code"] });
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } });
  video.srcObject = stream;
  video.hidden = false;
  await video.play();
  const stop = () => {
    stream.getTracks().forEach((t) => t.stop());
    video.hidden = true;
  };
  const look = async () => {
    const codes = await detector.detect(video).catch(() => []);
    if (codes.length > 0) {
      stop();
      $("qr-input").value = codes[0].rawValue;
      return verifyQr(codes[0].rawValue);
    }
    requestAnimationFrame(look);
  };
  look();
}

// A deferred script: the page is parsed when this runs.
for (const tab of document.querySelectorAll('[role="tab"]'))
  tab.addEventListener("click", () => showTab(tab.id.slice(4)));
const forms = {
  "form-token": () => verifyToken($("token-input").value),
  "form-qr": () => verifyQr($("qr-input").value),
  "form-credential": () => verifyCredential($("credential-input").value),
  "holder-form": checkHolder,
};
$("wallet-offer").addEventListener("click", offerToWallet);
for (const [id, submit] of Object.entries(forms))
  $(id).addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
const verifyFirst = (files) => files[0] && verifyFile(files[0]);
$("document-input").addEventListener("change", () => verifyFirst($("document-input").files));
const zone = $("drop-zone");
zone.addEventListener("dragover", (event) => {
  event.preventDefault();
  zone.classList.add("over");
});
zone.addEventListener("dragleave", () => zone.classList.remove("over"));
zone.addEventListener("drop", (event) => {
  event.preventDefault();
  zone.classList.remove("over");
  verifyFirst(event.dataTransfer.files);
});
if ("BarcodeDetector" in globalThis && navigator.mediaDevices) {
  $("qr-scan").hidden = false;
  const cameraFailed = {
    verdict: "INVALID_QR",
    message: "The camera could not be opened. Paste the code's text instead.",
  };
  $("qr-scan").addEventListener("click", () => startScan().catch(() => render(cameraFailed)));
}
// Opened from a scanned QR code (…/verify?qr=…) or a link with ?token=…
const params = new URLSearchParams(location.search);
if (params.get("qr")) {
  showTab("qr");
  $("qr-input").value = params.get("qr");
  verifyQr(params.get("qr"));
} else if (params.get("token")) {
  $("token-input").value = params.get("token");
  verifyToken(params.get("token"));
}
