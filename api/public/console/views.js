// The console's screens. Each takes the view element and the signed-in session, fills the element, and returns
// an optional refresh function (the queue and the signing list refresh themselves periodically and on focus).
import { ApiError, get, h, humanise, post, relative, say, short, when } from "./api.js";
import { checkDocument, documentCard } from "./documents.js";

const REQUEST_TYPES = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"];
const QUEUE_TABS = [
  ["", "All open"],
  ["AWAITING_DECISION", "Awaiting you"],
  ["AWAITING_OTHERS", "Awaiting others"],
  ["AWAITING_RESUBMISSION", "With applicant"],
  ["ESCALATED", "Escalated"],
];
const REJECTION_REASONS = "SAFETY_VIOLATION INCOMPLETE_DOCUMENTS POLICY_VIOLATION FRAUDULENT_APPLICATION OTHER".split(
  " ",
);

const browser = () => globalThis.SimpleWebAuthnBrowser;

const errorText = (error) =>
  error instanceof ApiError
    ? `${error.message} (${error.code})`
    : error?.name === "NotAllowedError"
      ? "The passkey prompt was cancelled or timed out."
      : String(error?.message ?? error);

/** Runs a user action with its button disabled; shows what went wrong. */
async function act(button, run) {
  button.disabled = true;
  say("");
  await run().catch((error) => say(errorText(error)));
  button.disabled = false;
}

/** A form control after its label. */
const labelled = (text, control) => [h("label", { for: control.id }, text), control];

/** A form's submit handler: the user action `run`, with the form's submit button disabled while it runs. */
const submitting = (button, run) => (event) => {
  event.preventDefault();
  void act(button, run);
};

// ---- invitation and sign-in -------------------------------------------------------------------------------------

const INVITATION = `Create a passkey on this device: it signs you in, no password needed, and it signs your department's decisions when its key is held by its reviewers' passkeys.`;

export function inviteView(view, _session, token, done) {
  const device = h("input#device-name", { value: guessDevice(), maxlength: 100, required: true });
  const button = h("button#register", { type: "submit" }, "Create my passkey");
  const register = async () => {
    const asked = { token, deviceName: device.value.trim() };
    const { options } = await post("/console/invitations/registration-options", asked);
    const response = await browser().startRegistration({ optionsJSON: options });
    const registered = await post("/console/invitations/register", { token, response });
    say(`Welcome, ${registered.reviewer.name}: your passkey is registered and you are signed in.`, true);
    done("#/queue");
  };
  view.replaceChildren(
    h(
      "form.card.center",
      { onsubmit: submitting(button, register) },
      h("h1", "Accept your invitation"),
      h("p.lead", INVITATION),
      labelled("Name of this device", device),
      button,
    ),
  );
}

export function signInView(view, _session, done) {
  const signIn = async () => {
    const { options } = await post("/console/sign-in/options", {});
    const response = await browser().startAuthentication({ optionsJSON: options });
    await post("/console/sign-in", { response });
    done("#/queue");
  };
  const button = h("button#sign-in", { type: "button", onclick: () => act(button, signIn) }, "Sign in with a passkey");
  view.replaceChildren(
    h(
      "div.card.center",
      h("h1", "Review console"),
      h("p.lead", "Reviewers sign in with the passkey registered from their invitation."),
      button,
    ),
  );
}

function guessDevice() {
  const systems = { Android: /Android/, iPhone: /iPhone|iPad/, Mac: /Mac/, Windows: /Windows/ };
  const os = Object.keys(systems).find((name) => systems[name].test(navigator.userAgent)) ?? "Linux";
  return `${os} browser`;
}

// ---- queue and history: paged lists -----------------------------------------------------------------------------

/**
 * One page of `path` read with the filters in `state` (empty ones left out), its rows in `list` (`items` picks them
 * from the answer and may show more of it), and a pager; `set` changes filters and reads again from page 1.
 */
function pagedList(view, path, state, list, { row, empty, items }) {
  const pager = h("div.pager");
  const load = async () => {
    const query = Object.entries({ ...state, limit: 20 }).filter(([, value]) => value !== "");
    const answer = await get(`${path}?${new URLSearchParams(query)}`);
    const rows = items(answer);
    const { page, totalPages } = answer.pagination;
    const turn = (label, by, disabled) =>
      h("button.secondary", { disabled, onclick: () => set({ page: state.page + by }) }, label);
    list.replaceChildren(...(rows.length ? rows.map(row) : [empty]));
    pager.replaceChildren(
      turn("Previous", -1, state.page <= 1),
      h("span", `Page ${page} of ${Math.max(totalPages, 1)}`),
      turn("Next", 1, state.page >= totalPages),
    );
    view.dataset.loaded = String(Date.now());
  };
  // A filter or page change: its failure is shown, like the first read's.
  const reload = () => load().catch((error) => say(errorText(error)));
  const set = (changes) => {
    Object.assign(state, { page: 1 }, changes);
    void reload();
  };
  return { pager, load, reload, set };
}

export function queueView(view, _session, params) {
  const state = {
    status: params.get("status") ?? "AWAITING_DECISION",
    requestType: params.get("type") ?? "",
    olderThanDays: params.get("older") ?? "",
    sort: params.get("sort") ?? "due",
    page: Number(params.get("page") ?? 1),
  };
  const tabs = h("div.tabs", { role: "tablist" });
  const updated = h("span#queue-updated.muted");
  const list = h("ul#queue.queue");
  const paged = pagedList(view, "/console/queue", state, list, {
    row: queueRow,
    empty: h("li.card.muted", "Nothing here."),
    items: (queue) => {
      const { overdue, ...counts } = queue.counts;
      const total = Object.values(counts).reduce((n, v) => n + v, 0);
      tabs.replaceChildren(
        ...QUEUE_TABS.map(([status, label]) =>
          h(
            "button",
            {
              role: "tab",
              "aria-selected": String(state.status === status),
              dataset: { status: status || "ALL" },
              onclick: () => paged.set({ status }),
            },
            `${label} `,
            h("span.count", status ? counts[status] : total),
          ),
        ),
        overdue ? h("span#overdue-count.badge.bad", `${overdue} overdue`) : "",
      );
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every 30 s.`;
      return queue.items;
    },
  });
  const options = (key, labels) =>
    Object.entries(labels).map(([v, text]) => h("option", { value: v, selected: v === state[key] }, text));
  const field = (key, label, control) => {
    control.id = `queue-${key}`;
    control.addEventListener("change", () => paged.set({ [key]: control.value }));
    return h("div", labelled(label, control));
  };
  const older = { type: "number", min: 0, step: "any", value: state.olderThanDays, placeholder: "any" };
  const types = { "": "All types", ...Object.fromEntries(REQUEST_TYPES.map((t) => [t, humanise(t)])) };
  const sorts = { due: "Overdue first", oldest: "Longest waiting", newest: "Newest" };
  view.replaceChildren(
    h("h1", "Queue"),
    h(
      "div.row.card",
      field("requestType", "Request type", h("select", options("requestType", types))),
      field("olderThanDays", "Waiting at least (days)", h("input", older)),
      field("sort", "Sort", h("select", options("sort", sorts))),
    ),
    tabs,
    list,
    paged.pager,
    h("p.muted", updated),
  );
  void paged.reload();
  return paged.load;
}

function queueRow(item) {
  const { stage, overdue } = item;
  const due = !stage.dueAt
    ? "No deadline"
    : overdue
      ? `Overdue ${relative(stage.dueAt).replace(" ago", "")}`
      : `Due ${relative(stage.dueAt)}`;
  const timeout = stage.onTimeout ? ` · on timeout: ${humanise(stage.onTimeout)}` : "";
  const data = { requestId: item.requestId, status: item.status, overdue: String(overdue) };
  return h(
    "li",
    { class: overdue ? "overdue" : "", dataset: data },
    h(
      "a",
      { href: `#/requests/${item.requestId}` },
      h("span.title", `${item.requestNumber} · ${humanise(item.requestType)}`),
      h("span", item.applicantName),
      h("span", `Stage ${stage.number}: ${stage.name} (${humanise(stage.mode)})`),
      h("span.due", h(overdue && stage.dueAt ? "span.badge.bad" : "span.badge", due)),
      h("span.meta", `${humanise(item.status)} · stage started ${relative(stage.startedAt)}${timeout}`),
    ),
  );
}

export function historyView(view, _session, params) {
  const state = { q: (params.get("q") ?? "").trim(), page: 1 };
  const list = h("ol#history.list");
  const paged = pagedList(view, "/console/decisions", state, list, {
    row: historyRow,
    empty: h("li.muted", "No decisions found."),
    items: (answer) => answer.decisions,
  });
  const hint = "Request number, applicant, remarks, decision, transaction…";
  const search = h("input#history-q", { type: "search", value: params.get("q") ?? "", placeholder: hint });
  const onsubmit = (event) => {
    event.preventDefault();
    paged.set({ q: search.value.trim() });
  };
  view.replaceChildren(
    h("h1", "Past decisions"),
    h("form.row.card", { onsubmit }, search, h("button#history-search", { type: "submit" }, "Search")),
    list,
    paged.pager,
  );
  void paged.reload();
}

function historyRow(d) {
  return h(
    "li.card",
    { dataset: { requestId: d.requestId } },
    h("strong", `${d.requestNumber} · ${humanise(d.decision)}`),
    ` · stage ${d.stage} · ${when(d.decidedAt)}`,
    d.isActive ? "" : h("span.badge.warn", humanise(d.status)),
    h("div", `“${d.remarks}”${d.reason ? ` · ${humanise(d.reason)}` : ""}`),
    h("div.muted", custodyText(d)),
    h("div.mono", `signer ${d.signer} · block ${d.blockNumber} · tx ${short(d.transactionHash)}`),
    h("a", { href: d.verifyUrl, target: "_blank", rel: "noopener" }, "Public verification"),
  );
}

/** The custody a decision was signed under (the API's label), with the reviewers who signed it by name. */
const custodyText = (d) =>
  `${d.custodyLabel}${d.reviewers.length ? `: ${d.reviewers.map((r) => r.reviewerName).join(", ")}` : ""}`;

// ---- one request ------------------------------------------------------------------------------------------------

export function requestView(view, session, requestId) {
  view.replaceChildren(h("p.muted", "Loading the request…"));
  const read = () =>
    Promise.all([get(`/requests/${requestId}`), get(`/requests/${requestId}/approvals?includeInvalidated=true`)]);
  void (async () => {
    // The department's custody as it is now (it may have moved to a passkey account since sign-in).
    const [[detail, approvals], me] = await Promise.all([read(), get("/console/me")]);
    session = me;
    const documents = h("div#documents");
    const decision = h("div#decision");
    const fact = (term, value, attrs = {}) => [h("dt", term), h("dd", attrs, value)];
    const card = (area, title, body, id) => h(`section.card.area-${area}`, { id }, h("h2", title), body);
    const stage = detail.currentStage;
    const decisionsCard = card("decisions", "Decisions", decisionsList(approvals.approvals), "decisions-card");
    view.replaceChildren(
      h("p", h("a", { href: "#/queue" }, "← Queue")),
      h("h1", `${detail.requestNumber} · ${humanise(detail.requestType)}`),
      h(
        "div.layout",
        h(
          "section.card.area-details",
          h(
            "dl.details",
            fact("Status", humanise(detail.status), { id: "request-status" }),
            fact("Applicant", detail.applicant.name),
            fact("Current stage", stage ? `${stage.stageOrder}. ${stage.stageName}` : "—"),
            fact("Submitted", when(detail.submittedAt)),
            fact("Token", `#${detail.tokenId} · ${short(detail.blockchainData.contractAddress)}`, { class: "mono" }),
            Object.entries(detail.metadata ?? {})
              .slice(0, 12)
              .map(([k, v]) => fact(k, typeof v === "string" ? v : JSON.stringify(v))),
          ),
        ),
        card("documents", "Documents", documents),
        // On a phone the decision follows the documents; on a wide screen it stays beside them.
        card("decide", "Your decision", decision),
        decisionsCard,
        card("timeline", "Timeline", h("ol.list", detail.timeline.map(timelineEvent))),
      ),
    );
    const checked = [];
    if (!detail.documents.length) documents.append(h("p.muted", "No documents."));
    for (const doc of detail.documents) {
      try {
        const result = await checkDocument(doc.documentId, detail.tokenId);
        checked.push({ doc, ...result });
        documents.append(documentCard(doc, result));
      } catch (error) {
        documents.append(h("div.doc.check.bad", `${doc.docType}: ${errorText(error)}`));
      }
    }
    documents.dataset.checked = String(checked.length);
    // Once a decision is recorded (or waits for other reviewers), the decisions and status are read again.
    const decided = async () => {
      const [now, standing] = await read();
      document.getElementById("request-status").textContent = humanise(now.status);
      decisionsCard.lastChild.replaceWith(decisionsList(standing.approvals));
    };
    decision.replaceChildren(decisionForm(session, detail, checked, decided));
  })().catch((error) => view.replaceChildren(h("p.notice", errorText(error))));
}

function decisionsList(approvals) {
  return approvals.length ? h("ol#decisions.list", approvals.map(approvalRow)) : h("p.muted", "No decision yet.");
}

function approvalRow(a) {
  const badge = a.status === "APPROVED" ? "span.badge.ok" : a.isActive ? "span.badge.warn" : "span.badge";
  const reviewed = `${when(a.createdAt)} · “${a.remarks}” · ${a.reviewedDocuments.length} documents reviewed · tx `;
  return h(
    "li",
    h("strong", a.departmentName),
    " · ",
    h(badge, humanise(a.status)),
    a.isActive ? "" : ` (${humanise(a.invalidationReason ?? "no longer standing")})`,
    h("div.muted", reviewed, h("span.mono", short(a.transactionHash))),
  );
}

const timelineEvent = (e) => h("li", h("strong", humanise(e.eventType)), ` · ${when(e.timestamp)} · ${e.description}`);

/** Custodial departments decide through the platform's key; passkey departments collect their reviewers' signatures. */
function decisionForm(session, detail, checked, decided) {
  const custodial = session.department.custody === "CUSTODIAL";
  const status = h("div#decision-status", { hidden: true });
  if (!detail.currentStage || detail.status !== "SUBMITTED")
    return h("p.muted", "The review is not open: nothing to decide.");
  const choices = { APPROVED: "Approve", CHANGES_REQUESTED: "Request changes", REJECTED: "Reject" };
  const choice = ([value, label]) =>
    h("label", h("input", { type: "radio", name: "decision", value, checked: value === "APPROVED" }), label);
  const remarks = h("textarea#remarks", { maxlength: 4000, required: true, placeholder: "What you checked and why" });
  const reasons = REJECTION_REASONS.map((r) => h("option", { value: r }, humanise(r)));
  const reason = h("select#reason", reasons);
  const required = h("input#required-documents", { placeholder: "e.g. SITE_PLAN, FIRE_CERTIFICATE" });
  const verified = checked.filter((c) => c.verified);
  const button = h("button#decide", { type: "submit" }, custodial ? "Record decision" : "Sign with my passkey");
  const decide = async () => {
    const decision = form.querySelector("input[name=decision]:checked").value;
    const asked = required.value.split(/[\s,]+/).filter(Boolean);
    const body = {
      decision,
      remarks: remarks.value.trim(),
      reviewedDocuments: verified.map((c) => c.doc.documentId),
      documentVersions: Object.fromEntries(verified.map((c) => [c.doc.documentId, c.detail.currentVersion])),
      ...(decision === "REJECTED" ? { reason: reason.value } : {}),
      ...(decision === "CHANGES_REQUESTED" ? { requiredDocuments: asked } : {}),
    };
    if (custodial) {
      await decideCustodially(detail.requestId, body, status);
      form.hidden = true;
    } else {
      const opened = await post(`/console/requests/${detail.requestId}/signing-requests`, body);
      // Opened: signed from here now, or later from the Signing page; never opened twice from this form.
      form.hidden = true;
      await showSigning(status, opened, true);
    }
    await decided();
  };
  const form = h(
    "form",
    { onsubmit: submitting(button, decide) },
    h("div.choices", Object.entries(choices).map(choice)),
    labelled("Remarks", remarks),
    labelled("Reason (rejection)", reason),
    labelled("Documents asked for (changes)", required),
    h("p.muted", `Covers the ${verified.length} of ${checked.length} documents verified above, at the versions shown.`),
    h(
      "p.muted",
      custodial
        ? "Signed by the platform's custodial key for your department."
        : "Signed by your passkey; the platform relays it once your department's threshold of reviewers has signed.",
    ),
    button,
  );
  return h("div", form, status);
}

/** Shows a decision's or signing request's state in its status box. */
function showStatus(status, state, className, children) {
  Object.assign(status, { hidden: false, className });
  status.dataset.state = state;
  status.replaceChildren(...children);
}

async function decideCustodially(requestId, body, status) {
  const { decision, ...rest } = body;
  const path = decision === "APPROVED" ? "approve" : decision === "REJECTED" ? "reject" : "request-changes";
  const answer = await post(`/requests/${requestId}/${path}`, rest);
  showStatus(status, "SUBMITTED", "status ok", [
    h("strong", `${humanise(decision)}: recorded on chain`),
    h("div.mono", `tx ${answer.transactionHash}`),
    h("div", "Signed by the platform's custodial key for your department."),
  ]);
  await showOnChainRecord(status, answer.transactionHash);
}

/** A signing request's state; signs it with this reviewer's passkey when asked to and possible. */
async function showSigning(status, signing, sign) {
  const tones = { SUBMITTED: "status ok", COLLECTING: "status" };
  const render = (s) => showStatus(status, s.status, tones[s.status] ?? "status bad", signingSummary(s));
  render(signing);
  if (!sign || signing.status !== "COLLECTING" || !signing.allowCredentials?.length) return signing;
  const current = await signWithPasskey(signing);
  render(current);
  if (current.status === "SUBMITTED" && current.kind === "DECISION" && current.transactionHash)
    await showOnChainRecord(status, current.transactionHash);
  return current;
}

/** IApprovalRegistry.DecisionStatus as the Decision typed data numbers it (abis/enums.ts). */
const DECISION_CODES = { APPROVED: 1, REJECTED: 2, CHANGES_REQUESTED: 3 };

/** The remarks record whose keccak256 is signed: canonical JSON (keys sorted) of remarks, reason, documents asked. */
function remarksRecord(summary) {
  // Keys written in sorted order.
  return JSON.stringify({
    ...(summary.decision === "REJECTED" ? { reason: summary.reason } : {}),
    remarks: summary.remarks ?? "",
    ...(summary.decision === "CHANGES_REQUESTED" ? { requiredDocuments: summary.requiredDocuments ?? [] } : {}),
  });
}

/**
 * The challenge to sign, computed here from the typed data (never the server's digest taken on trust), after
 * checking that what the page shows is what the typed data says: a server that showed one decision and asked for a
 * signature over another is refused before the passkey prompt.
 */
async function challengeOf(signing) {
  const { TypedDataEncoder, keccak256, toUtf8Bytes, encodeBase64, getAddress } =
    await import("/console/vendor/ethers.min.js");
  const { domain, types, message } = signing.typedData;
  const { EIP712Domain: _domain, ...signedTypes } = types;
  const digest = TypedDataEncoder.hash(domain, signedTypes, message);
  const summary = signing.summary ?? {};
  const shown =
    signing.kind === "DECISION"
      ? Number(message.decision) === DECISION_CODES[summary.decision] &&
        message.remarksHash === keccak256(toUtf8Bytes(remarksRecord(summary))) &&
        JSON.stringify(message.documents) === JSON.stringify((summary.documents ?? []).map((d) => d.sha256))
      : signing.kind === "KEY_PROOF"
        ? getAddress(message.wallet) === getAddress(summary.wallet)
        : JSON.stringify([message.add, message.remove, Number(message.threshold)]) ===
          JSON.stringify([summary.add, summary.remove, Number(summary.threshold)]);
  if (digest !== signing.digest || !shown)
    throw new Error("What the server asks you to sign is not what is shown: nothing was signed");
  return encodeBase64(digest).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export async function signWithPasskey(signing) {
  const response = await browser().startAuthentication({
    optionsJSON: {
      challenge: await challengeOf(signing),
      allowCredentials: signing.allowCredentials.map((id) => ({ id, type: "public-key" })),
      userVerification: "required",
      rpId: location.hostname,
    },
  });
  return post(`/console/signing-requests/${signing.id}/assertions`, { response });
}

/** What a signing request signs (a decision, a key proof, a reviewer change), who signed, and where it stands. */
function signingSummary(s) {
  const signed = s.signatures ?? [];
  const { decision, reason, remarks, documents, wallet, departmentCode, reviewers, add, remove } = s.summary ?? {};
  const reviewer = (r) =>
    r.reviewerName
      ? h("li", `${r.reviewerName} (${r.deviceName}) · ${short(r.publicKey)}`)
      : h("li.bad", `Not a passkey of your department's reviewers: ${short(r.publicKey)}`);
  const covered = (d) => h("li.mono", `v${d.version} · SHA-256 ${short(d.sha256 ?? "")}`);
  const signer = (x) => h("li", `Signed by ${x.reviewerName} · ${when(x.signedAt)}`);
  const change = `Reviewer change: add ${add?.length ?? 0}, remove ${remove?.length ?? 0}, threshold ${s.summary?.threshold}.`;
  const what = {
    DECISION: [
      h("div", `Decision: ${humanise(decision)}${reason ? ` (${humanise(reason)})` : ""} · “${remarks ?? ""}”`),
      documents?.length ? h("ul.list", documents.map(covered)) : h("div.muted", "No document covered."),
    ],
    KEY_PROOF: [
      h("div", `Key proof: the passkey account ${wallet} becomes ${departmentCode}'s wallet (held by its reviewers).`),
      h("div", "Passkeys that will sign for the department:"),
      h("ul#account-reviewers.list", (reviewers ?? []).map(reviewer)),
    ],
  }[s.kind] ?? [h("div", change)];
  const collecting = `Collecting signatures: ${signed.length} of ${s.threshold}`;
  const state = { COLLECTING: collecting, SUBMITTED: "Submitted on chain" }[s.status] ?? humanise(s.status);
  return [
    h("strong.signing-state", state),
    ...what,
    signed.length ? h("ul.list", signed.map(signer)) : "",
    s.transactionHash ? h("div#signing-tx.mono", `tx ${s.transactionHash}`) : "",
    s.failure ? h("div", `${s.failure.code ?? ""} ${s.failure.message ?? ""}`) : "",
    s.status === "COLLECTING" ? h("div.muted", `Expires ${when(s.expiresAt)}`) : "",
  ];
}

/** The decision as the chain recorded it (signer, custody, block), once the index has the transaction. */
async function showOnChainRecord(status, transactionHash) {
  const record = h("div#chain-record.muted", "Waiting for the chain's record…");
  status.append(record);
  for (let attempt = 0; attempt < 30; attempt++) {
    const [found] = (await get(`/console/decisions?q=${transactionHash}&limit=1`)).decisions;
    if (found) {
      record.className = "";
      record.dataset.signer = found.signer;
      return record.replaceChildren(
        h("div", `On chain, block ${found.blockNumber}: signer `, h("span#chain-signer.mono", found.signer)),
        h("div", custodyText(found)),
        h("a", { href: found.verifyUrl, target: "_blank", rel: "noopener" }, "Public verification"),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  record.textContent = "The chain's record is not indexed yet: see the history later.";
}

// ---- signing requests -------------------------------------------------------------------------------------------

function signingCard(s) {
  const status = h("div.status", ...signingSummary(s));
  const sign = async () => {
    const now = await showSigning(status, s, true);
    // Signed by this reviewer (or relayed): nothing left for them to sign here.
    button.hidden = now.status !== "COLLECTING" || !now.allowCredentials?.length;
  };
  const mine = s.allowCredentials?.length;
  const label = mine ? "Sign with my passkey" : "Signed (or not yours to sign)";
  const button = h("button", { type: "button", disabled: !mine, onclick: () => act(button, sign) }, label);
  return h(
    "div.card",
    { dataset: { signingRequestId: s.id } },
    s.requestId ? h("a", { href: `#/requests/${s.requestId}` }, "Open the request") : "",
    status,
    button,
  );
}

const SIGNING = `Decisions, key proofs and reviewer changes of your department's passkey account, until enough reviewers have signed.`;

export function signingView(view, _session) {
  const list = h("div#signing");
  view.replaceChildren(h("h1", "Waiting for signatures"), h("p.lead", SIGNING), list);
  async function load() {
    const { signingRequests = [] } = (await get("/console/signing-requests?status=COLLECTING")) ?? {};
    const empty = h("p.muted", "Nothing is waiting for signatures.");
    list.replaceChildren(...(signingRequests.length ? signingRequests.map(signingCard) : [empty]));
    view.dataset.loaded = String(Date.now());
  }
  void load().catch((error) => say(errorText(error)));
  return load;
}
