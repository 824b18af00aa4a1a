// A request's documents as the reviewer sees them: each file downloaded, hashed here (SHA-256 by WebCrypto) and the
// hash checked twice, against the version the API lists and against the chain's anchor for this licence
// (/verify/document/{hash}?tokenId=…); then shown (pdf.js renders a PDF's pages on canvases, an image as itself).
import { get, h, short, when } from "./api.js";

export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `0x${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * This server's own signed file URLs are fetched from the page's origin: the signature covers the path and query,
 * not the host, and PUBLIC_BASE_URL may name the server otherwise (a development stack's http://127.0.0.1:PORT,
 * whose console runs at http://localhost:PORT). A bucket's URL is fetched as given.
 */
function downloadTarget(url) {
  const parsed = new URL(url, location.href);
  return parsed.pathname.startsWith("/api/v1/files/") ? `${parsed.pathname}${parsed.search}` : parsed.href;
}

/**
 * Downloads and checks one document: { detail, bytes, hash, listed (the API's current hash matches), anchor (the
 * chain's answer for this licence, or null), verified }.
 */
export async function checkDocument(documentId, tokenId) {
  const detail = await get(`/documents/${documentId}`);
  const response = await fetch(downloadTarget(detail.downloadUrl), { credentials: "same-origin" });
  if (!response.ok) throw new Error(`download failed (${response.status})`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const hash = await sha256Hex(bytes);
  const chain = await fetch(`/api/v1/verify/document/${hash.slice(2)}?tokenId=${tokenId}`);
  const anchor = chain.ok ? await chain.json() : null;
  const listed = hash === detail.currentHash.toLowerCase();
  const verified = listed && anchor?.isLatest === true && anchor?.tokenId === tokenId;
  return { detail, bytes, hash, listed, anchor, verified };
}

/** The document's card: name, check result, versions, preview. */
export function documentCard(doc, checked) {
  const { detail, hash, anchor, verified } = checked;
  const current = detail.versions.find((v) => v.version === detail.currentVersion) ?? detail.versions.at(-1);
  const preview = h("div.preview", h("span.muted", "Preparing preview…"));
  const mono = (hex) => h("span.mono", short(hex));
  const version = (v) =>
    h("li", `v${v.version} · ${when(v.createdAt)} · `, mono(v.hash), " · tx ", mono(v.transactionHash));
  void renderPreview(preview, checked.bytes, current?.mimeType ?? "").catch((error) => {
    preview.replaceChildren(h("span.muted", `No preview (${error.message})`));
  });
  return h(
    "div.doc",
    { dataset: { documentId: doc.documentId, verified: String(verified) } },
    h("strong", doc.docType),
    " ",
    h("span.muted", `${doc.originalFilename} · version ${detail.currentVersion}`),
    h(
      verified ? "div.check.ok" : "div.check.bad",
      { "data-check": verified ? "verified" : "failed" },
      verified
        ? `✓ Verified: SHA-256 computed here matches the chain, block ${anchor.blockchainRecord.blockNumber}`
        : anchor && !anchor.isLatest
          ? `✗ This file is version ${anchor.version}; a newer version is anchored`
          : "✗ Not verified: the downloaded file's SHA-256 is not anchored for this licence",
    ),
    h("div.mono.muted", `SHA-256 ${hash}`),
    detail.versions.length > 1 &&
      h("details", h("summary", `${detail.versions.length} versions`), h("ol.list", detail.versions.map(version))),
    current?.activeContent?.length > 0 && h("div.check.bad", `Active content: ${current.activeContent.join(", ")}`),
    preview,
  );
}

async function renderPreview(container, bytes, mimeType) {
  if (mimeType.startsWith("image/")) {
    const url = URL.createObjectURL(new Blob([bytes], { type: mimeType }));
    container.replaceChildren(h("img", { src: url, alt: "Document preview" }));
    container.dataset.rendered = "image";
    return;
  }
  if (mimeType !== "application/pdf") throw new Error(mimeType || "unknown type");
  const { getDocument, GlobalWorkerOptions } = await import("/console/vendor/pdf.min.mjs");
  GlobalWorkerOptions.workerSrc = "/console/vendor/pdf.worker.min.mjs";
  // A copy: pdf.js transfers the buffer to its worker, and the bytes stay ours for hashing and download.
  const pdf = await getDocument({ data: bytes.slice(), isEvalSupported: false }).promise;
  const pages = [];
  for (let n = 1; n <= Math.min(pdf.numPages, 3); n++) {
    const page = await pdf.getPage(n);
    // Drawn at the widest the preview is shown (640 CSS px; narrower screens scale it down), sharp on a dense screen.
    const width = 640;
    const viewport = page.getViewport({
      scale: (width / page.getViewport({ scale: 1 }).width) * (window.devicePixelRatio || 1),
    });
    const canvas = h("canvas", {
      width: Math.floor(viewport.width),
      height: Math.floor(viewport.height),
      "aria-label": `Page ${n}`,
    });
    await page.render({ canvasContext: canvas.getContext("2d"), viewport }).promise;
    pages.push(canvas);
  }
  container.replaceChildren(...pages, pdf.numPages > 3 ? h("div.muted", `${pdf.numPages - 3} more pages`) : "");
  container.dataset.rendered = "pdf";
}
