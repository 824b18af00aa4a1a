// The public verification page: three ways in (token number, QR code, document), one verdict out. Talks only to
// this server's public /api/v1/verify endpoints; documents are hashed here and never uploaded.
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
  const list = $("approvals");
  list.replaceChildren(
    ...(approvals || []).map((a) => {
      const item = document.createElement("li");
      // The API numbers stages from 1, as the workflow's stageOrder.
      item.textContent = `${a.departmentName} — stage ${a.stage} — ${day(a.approvedAt)}${signedByText(a)}`;
      return item;
    }),
  );
  $("proof-block").hidden = proof.length === 0;
  fill($("proof"), proof);
  $("result").hidden = false;
  $("result").scrollIntoView({ behavior: "smooth", block: "start" });
}

/** Who could sign the approval, in words (the API's signedBy). */
function signedByText(a) {
  if (a.signedBy === "DEPARTMENT_REVIEWERS")
    return ` — signed by the department's reviewers with their own passkeys (${a.reviewerThreshold} needed)`;
  if (a.signedBy === "DEPARTMENT_KEY") return " — signed with the department's own key";
  if (a.signedBy === "PLATFORM") return " — signed by the platform for the department";
  return "";
}

function fill(list, rows) {
  list.replaceChildren(
    ...rows
      .filter(([, value]) => value !== null && value !== undefined && value !== "")
      .flatMap(([term, value]) => {
        const dt = document.createElement("dt");
        dt.textContent = term;
        const dd = document.createElement("dd");
        dd.textContent = String(value);
        return [dt, dd];
      }),
  );
}

// The licence shown, for the holder check.
let shownTokenId = null;

function renderLicence(answer) {
  shownTokenId = answer.tokenId ?? null;
  $("holder-form").hidden = shownTokenId === null;
  $("holder-result").textContent = "";
  render({
    verdict: answer.verdict,
    message: answer.message,
    details: [
      ["Licence number", answer.requestNumber],
      [
        "Type",
        answer.requestType && (TYPE_NAMES[answer.requestType] || answer.requestType.replaceAll("_", " ").toLowerCase()),
      ],
      ["Holder", answer.applicantName],
      ["Status", answer.status && answer.status.replaceAll("_", " ").toLowerCase()],
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

function renderDocument(answer) {
  $("holder-form").hidden = true;
  render({
    kind: "document",
    verdict: answer.verdict,
    message: answer.message,
    details: [
      ["Document type", answer.docType && answer.docType.replaceAll("_", " ").toLowerCase()],
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

async function ask(path) {
  const response = await fetch(`${API}/${path}`, { headers: { accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  return { status: response.status, body };
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
    return render({
      ...problem(
        400,
        { message: "Enter the licence number as printed (e.g. RL-2026-000001) or its token number." },
        "licence number",
      ),
    });
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
  const response = await fetch(`${API}/holder/${shownTokenId}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ applicantId: $("holder-id").value.trim(), salt }),
  });
  const body = await response.json().catch(() => ({}));
  if (response.status !== 200) {
    out.textContent = body.message || "The check could not be made. Please try again shortly.";
    out.dataset.matches = "error";
    return;
  }
  out.dataset.matches = String(body.matches);
  out.textContent = body.matches
    ? "Match: this identity and salt open the commitment recorded on the blockchain for this licence."
    : "No match: this identity and salt do not open the commitment recorded for this licence.";
}

async function verifyQr(value) {
  const { status, body } = await ask(`qr/${encodeURIComponent(value.trim())}`);
  if (status === 200) renderLicence(body);
  else if (status === 400) render({ verdict: "INVALID_QR", message: "This is not a licence QR code." });
  else render(problem(status, body, "licence"));
}

async function verifyFile(file) {
  $("document-hash").hidden = false;
  $("document-hash").textContent = `Fingerprinting ${file.name}…`;
  const bytes = new Uint8Array(await file.arrayBuffer());
  const hash = await sha256Hex(bytes);
  $("document-hash").textContent = `SHA-256 ${hash}`;
  const { status, body } = await ask(`document/${hash}`);
  if (status === 200) renderDocument(body);
  else if (status === 404)
    render({
      kind: "document",
      verdict: "UNKNOWN",
      message:
        "This exact file is not recorded on the blockchain: it is not a document of any licence, or it was changed.",
    });
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
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ]);
  const H = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
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

document.addEventListener("DOMContentLoaded", () => {
  for (const tab of document.querySelectorAll('[role="tab"]'))
    tab.addEventListener("click", () => showTab(tab.id.slice(4)));
  $("form-token").addEventListener("submit", (event) => {
    event.preventDefault();
    verifyToken($("token-input").value);
  });
  $("form-qr").addEventListener("submit", (event) => {
    event.preventDefault();
    verifyQr($("qr-input").value);
  });
  $("holder-form").addEventListener("submit", (event) => {
    event.preventDefault();
    checkHolder();
  });
  $("document-input").addEventListener("change", () => {
    const file = $("document-input").files[0];
    if (file) verifyFile(file);
  });
  const zone = $("drop-zone");
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const file = event.dataTransfer.files[0];
    if (file) verifyFile(file);
  });
  if ("BarcodeDetector" in globalThis && navigator.mediaDevices) {
    $("qr-scan").hidden = false;
    $("qr-scan").addEventListener("click", () =>
      startScan().catch(() =>
        render({ verdict: "INVALID_QR", message: "The camera could not be opened. Paste the code's text instead." }),
      ),
    );
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
});
