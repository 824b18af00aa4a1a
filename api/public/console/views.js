// The console's screens. Each takes the view element and the signed-in session, fills the element, and returns
// an optional refresh function (the queue and the signing list refresh themselves periodically and on focus).
import { ApiError, get, h, humanise, post, relative, short, when } from "./api.js";
import { checkDocument, documentCard } from "./documents.js";

const REQUEST_TYPES = ["RESORT_LICENSE", "TRADE_LICENSE", "BUILDING_PERMIT"];
const QUEUE_TABS = [
  ["", "All open"],
  ["AWAITING_DECISION", "Awaiting you"],
  ["AWAITING_OTHERS", "Awaiting others"],
  ["AWAITING_RESUBMISSION", "With applicant"],
  ["ESCALATED", "Escalated"],
];
const REJECTION_REASONS = [
  "SAFETY_VIOLATION",
  "INCOMPLETE_DOCUMENTS",
  "POLICY_VIOLATION",
  "FRAUDULENT_APPLICATION",
  "OTHER",
];

const browser = () => globalThis.SimpleWebAuthnBrowser;

export function say(message, ok = false) {
  const notice = document.getElementById("notice");
  notice.textContent = message;
  notice.className = ok ? "notice ok" : "notice";
  notice.hidden = !message;
  notice.dataset.at = String(Date.now());
}

/** A notice stays for the screen it was shown on (or the one it sends the reviewer to), then goes. */
export function clearStaleNotice() {
  const notice = document.getElementById("notice");
  if (Date.now() - Number(notice.dataset.at ?? 0) > 1000) say("");
}

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
  try {
    await run();
  } catch (error) {
    say(errorText(error));
  } finally {
    button.disabled = false;
  }
}

// ---- invitation and sign-in -------------------------------------------------------------------------------------

export function inviteView(view, _session, token, done) {
  const deviceName = h("input", { id: "device-name", value: guessDevice(), maxlength: 100, required: true });
  const button = h("button", { type: "submit", id: "register" }, "Create my passkey");
  view.replaceChildren(
    h(
      "form",
      {
        class: "card center",
        onsubmit: (event) => {
          event.preventDefault();
          void act(button, async () => {
            const { options } = await post("/console/invitations/registration-options", {
              token,
              deviceName: deviceName.value.trim(),
            });
            const response = await browser().startRegistration({ optionsJSON: options });
            const registered = await post("/console/invitations/register", { token, response });
            say(`Welcome, ${registered.reviewer.name}: your passkey is registered and you are signed in.`, true);
            done("#/queue");
          });
        },
      },
      h("h1", {}, "Accept your invitation"),
      h(
        "p",
        { class: "lead" },
        "Create a passkey on this device: it signs you in, no password needed, and it signs your department's decisions when its key is held by its reviewers' passkeys.",
      ),
      h("label", { for: "device-name" }, "Name of this device"),
      deviceName,
      button,
    ),
  );
}

export function signInView(view, _session, done) {
  const button = h("button", { type: "button", id: "sign-in" }, "Sign in with a passkey");
  button.addEventListener("click", () =>
    act(button, async () => {
      const { options } = await post("/console/sign-in/options", {});
      const response = await browser().startAuthentication({ optionsJSON: options });
      await post("/console/sign-in", { response });
      done("#/queue");
    }),
  );
  view.replaceChildren(
    h(
      "div",
      { class: "card center" },
      h("h1", {}, "Review console"),
      h("p", { class: "lead" }, "Reviewers sign in with the passkey registered from their invitation."),
      button,
    ),
  );
}

function guessDevice() {
  const ua = navigator.userAgent;
  const os = /Android/.test(ua)
    ? "Android"
    : /iPhone|iPad/.test(ua)
      ? "iPhone"
      : /Mac/.test(ua)
        ? "Mac"
        : /Windows/.test(ua)
          ? "Windows"
          : "Linux";
  return `${os} browser`;
}

// ---- queue ------------------------------------------------------------------------------------------------------

export function queueView(view, _session, params) {
  const state = {
    status: params.get("status") ?? "AWAITING_DECISION",
    requestType: params.get("type") ?? "",
    olderThanDays: params.get("older") ?? "",
    sort: params.get("sort") ?? "due",
    page: Number(params.get("page") ?? 1),
  };
  // A filter or page change: its failure is shown, like the first load's.
  const reload = () => load().catch((error) => say(errorText(error)));
  const tabs = h("div", { class: "tabs", role: "tablist" });
  const list = h("ul", { class: "queue", id: "queue" });
  const pager = h("div", { class: "pager" });
  const updated = h("span", { class: "muted", id: "queue-updated" });
  const select = (id, options, value, label) =>
    h(
      "div",
      {},
      h("label", { for: id }, label),
      h(
        "select",
        {
          id,
          onchange: (e) => {
            state[id.replace("queue-", "")] = e.target.value;
            state.page = 1;
            void reload();
          },
        },
        options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)),
      ),
    );
  const older = h("input", {
    id: "queue-olderThanDays",
    type: "number",
    min: 0,
    step: "any",
    value: state.olderThanDays,
    placeholder: "any",
  });
  older.addEventListener("change", () => {
    state.olderThanDays = older.value;
    state.page = 1;
    void reload();
  });
  view.replaceChildren(
    h("h1", {}, "Queue"),
    h(
      "div",
      { class: "row card" },
      select(
        "queue-requestType",
        [["", "All types"], ...REQUEST_TYPES.map((t) => [t, humanise(t)])],
        state.requestType,
        "Request type",
      ),
      h("div", {}, h("label", { for: "queue-olderThanDays" }, "Waiting at least (days)"), older),
      select(
        "queue-sort",
        [
          ["due", "Overdue first"],
          ["oldest", "Longest waiting"],
          ["newest", "Newest"],
        ],
        state.sort,
        "Sort",
      ),
    ),
    tabs,
    list,
    pager,
    h("p", { class: "muted" }, updated),
  );

  async function load() {
    const query = new URLSearchParams({ sort: state.sort, page: String(state.page), limit: "20" });
    if (state.status) query.set("status", state.status);
    if (state.requestType) query.set("requestType", state.requestType);
    if (state.olderThanDays !== "") query.set("olderThanDays", state.olderThanDays);
    const queue = await get(`/console/queue?${query}`);
    const total = Object.entries(queue.counts)
      .filter(([k]) => k !== "overdue")
      .reduce((n, [, v]) => n + v, 0);
    tabs.replaceChildren(
      ...QUEUE_TABS.map(([status, label]) =>
        h(
          "button",
          {
            role: "tab",
            "aria-selected": String(state.status === status),
            dataset: { status: status || "ALL" },
            onclick: () => {
              state.status = status;
              state.page = 1;
              void reload();
            },
          },
          `${label} `,
          h("span", { class: "count" }, status ? queue.counts[status] : total),
        ),
      ),
      queue.counts.overdue
        ? h("span", { class: "badge bad", id: "overdue-count" }, `${queue.counts.overdue} overdue`)
        : "",
    );
    list.replaceChildren(
      ...(queue.items.length ? queue.items.map(queueRow) : [h("li", { class: "card muted" }, "Nothing here.")]),
    );
    pager.replaceChildren(
      h(
        "button",
        {
          class: "secondary",
          disabled: state.page <= 1,
          onclick: () => {
            state.page--;
            void reload();
          },
        },
        "Previous",
      ),
      h("span", {}, `Page ${queue.pagination.page} of ${Math.max(queue.pagination.totalPages, 1)}`),
      h(
        "button",
        {
          class: "secondary",
          disabled: state.page >= queue.pagination.totalPages,
          onclick: () => {
            state.page++;
            void reload();
          },
        },
        "Next",
      ),
    );
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every 30 s.`;
    view.dataset.loaded = String(Date.now());
  }
  void reload();
  return () => load();
}

function queueRow(item) {
  const due = item.stage.dueAt
    ? h(
        "span",
        { class: item.overdue ? "badge bad" : "badge" },
        item.overdue
          ? `Overdue ${relative(item.stage.dueAt).replace(" ago", "")}`
          : `Due ${relative(item.stage.dueAt)}`,
      )
    : h("span", { class: "badge" }, "No deadline");
  return h(
    "li",
    {
      class: item.overdue ? "overdue" : "",
      dataset: { requestId: item.requestId, status: item.status, overdue: String(item.overdue) },
    },
    h(
      "a",
      { href: `#/requests/${item.requestId}` },
      h("span", { class: "title" }, `${item.requestNumber} · ${humanise(item.requestType)}`),
      h("span", {}, item.applicantName),
      h("span", {}, `Stage ${item.stage.number}: ${item.stage.name} (${humanise(item.stage.mode)})`),
      h("span", { class: "due" }, due),
      h(
        "span",
        { class: "meta" },
        `${humanise(item.status)} · stage started ${relative(item.stage.startedAt)}${item.stage.onTimeout ? ` · on timeout: ${humanise(item.stage.onTimeout)}` : ""}`,
      ),
    ),
  );
}

// ---- one request ------------------------------------------------------------------------------------------------

export function requestView(view, session, requestId) {
  view.replaceChildren(h("p", { class: "muted" }, "Loading the request…"));
  void (async () => {
    // The department's custody as it is now (it may have moved to a passkey account since sign-in).
    const [detail, approvals, me] = await Promise.all([
      get(`/requests/${requestId}`),
      get(`/requests/${requestId}/approvals?includeInvalidated=true`),
      get("/console/me"),
    ]);
    session = me;
    const documents = h("div", { id: "documents" });
    const decision = h("div", { id: "decision" });
    view.replaceChildren(
      h("p", {}, h("a", { href: "#/queue" }, "← Queue")),
      h("h1", {}, `${detail.requestNumber} · ${humanise(detail.requestType)}`),
      h(
        "div",
        { class: "layout" },
        h(
          "section",
          { class: "card area-details" },
          h(
            "dl",
            { class: "details" },
            h("dt", {}, "Status"),
            h("dd", { id: "request-status" }, humanise(detail.status)),
            h("dt", {}, "Applicant"),
            h("dd", {}, detail.applicant.name),
            h("dt", {}, "Current stage"),
            h(
              "dd",
              {},
              detail.currentStage ? `${detail.currentStage.stageOrder}. ${detail.currentStage.stageName}` : "—",
            ),
            h("dt", {}, "Submitted"),
            h("dd", {}, when(detail.submittedAt)),
            h("dt", {}, "Token"),
            h("dd", { class: "mono" }, `#${detail.tokenId} · ${short(detail.blockchainData.contractAddress)}`),
            ...Object.entries(detail.metadata ?? {})
              .slice(0, 12)
              .flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v))]),
          ),
        ),
        h("section", { class: "card area-documents" }, h("h2", {}, "Documents"), documents),
        // On a phone the decision follows the documents; on a wide screen it stays beside them.
        h("section", { class: "card area-decide" }, h("h2", {}, "Your decision"), decision),
        h(
          "section",
          { class: "card area-decisions", id: "decisions-card" },
          h("h2", {}, "Decisions"),
          decisionsList(approvals.approvals),
        ),
        h("section", { class: "card area-timeline" }, h("h2", {}, "Timeline"), timelineList(detail.timeline)),
      ),
    );
    const checked = [];
    documents.replaceChildren(...(detail.documents.length ? [] : [h("p", { class: "muted" }, "No documents.")]));
    for (const doc of detail.documents) {
      try {
        const result = await checkDocument(doc.documentId, detail.tokenId);
        checked.push({ doc, ...result });
        documents.append(documentCard(doc, result));
      } catch (error) {
        documents.append(h("div", { class: "doc check bad" }, `${doc.docType}: ${errorText(error)}`));
      }
    }
    documents.dataset.checked = String(checked.length);
    // Once a decision is recorded (or waits for other reviewers), the decisions and status are read again.
    const decided = async () => {
      const [now, standing] = await Promise.all([
        get(`/requests/${requestId}`),
        get(`/requests/${requestId}/approvals?includeInvalidated=true`),
      ]);
      document.getElementById("request-status").textContent = humanise(now.status);
      const card = document.getElementById("decisions-card");
      card.replaceChildren(h("h2", {}, "Decisions"), decisionsList(standing.approvals));
    };
    decision.replaceChildren(decisionForm(session, detail, checked, decided));
  })().catch((error) => view.replaceChildren(h("p", { class: "notice" }, errorText(error))));
}

function decisionsList(approvals) {
  if (!approvals.length) return h("p", { class: "muted" }, "No decision yet.");
  return h(
    "ol",
    { class: "list", id: "decisions" },
    approvals.map((a) =>
      h(
        "li",
        {},
        h("strong", {}, a.departmentName),
        " · ",
        h(
          "span",
          { class: a.status === "APPROVED" ? "badge ok" : a.isActive ? "badge warn" : "badge" },
          humanise(a.status),
        ),
        a.isActive ? "" : ` (${humanise(a.invalidationReason ?? "no longer standing")})`,
        h(
          "div",
          { class: "muted" },
          `${when(a.createdAt)} · “${a.remarks}” · ${a.reviewedDocuments.length} documents reviewed · tx `,
          h("span", { class: "mono" }, short(a.transactionHash)),
        ),
      ),
    ),
  );
}

function timelineList(events) {
  return h(
    "ol",
    { class: "list" },
    events.map((e) =>
      h("li", {}, h("strong", {}, humanise(e.eventType)), ` · ${when(e.timestamp)} · ${e.description}`),
    ),
  );
}

/** Custodial departments decide through the platform's key; passkey departments collect their reviewers' signatures. */
function decisionForm(session, detail, checked, decided) {
  const custodial = session.department.custody === "CUSTODIAL";
  const status = h("div", { id: "decision-status", hidden: true });
  if (!detail.currentStage || detail.status !== "SUBMITTED")
    return h("p", { class: "muted" }, "The review is not open: nothing to decide.");
  const choice = (value, label) =>
    h("label", {}, h("input", { type: "radio", name: "decision", value, checked: value === "APPROVED" }), label);
  const remarks = h("textarea", {
    id: "remarks",
    maxlength: 4000,
    required: true,
    placeholder: "What you checked and why",
  });
  const reason = h(
    "select",
    { id: "reason" },
    REJECTION_REASONS.map((r) => h("option", { value: r }, humanise(r))),
  );
  const required = h("input", { id: "required-documents", placeholder: "e.g. SITE_PLAN, FIRE_CERTIFICATE" });
  const verified = checked.filter((c) => c.verified);
  const button = h("button", { type: "submit", id: "decide" }, custodial ? "Record decision" : "Sign with my passkey");
  const form = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault();
        const decision = form.querySelector("input[name=decision]:checked").value;
        const body = {
          decision,
          remarks: remarks.value.trim(),
          reviewedDocuments: verified.map((c) => c.doc.documentId),
          documentVersions: Object.fromEntries(verified.map((c) => [c.doc.documentId, c.detail.currentVersion])),
          ...(decision === "REJECTED" ? { reason: reason.value } : {}),
          ...(decision === "CHANGES_REQUESTED"
            ? { requiredDocuments: required.value.split(/[\s,]+/).filter(Boolean) }
            : {}),
        };
        void act(button, async () => {
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
        });
      },
    },
    h(
      "div",
      { class: "choices" },
      choice("APPROVED", "Approve"),
      choice("CHANGES_REQUESTED", "Request changes"),
      choice("REJECTED", "Reject"),
    ),
    h("label", { for: "remarks" }, "Remarks"),
    remarks,
    h("label", { for: "reason" }, "Reason (rejection)"),
    reason,
    h("label", { for: "required-documents" }, "Documents asked for (changes)"),
    required,
    h(
      "p",
      { class: "muted" },
      `Covers the ${verified.length} of ${checked.length} documents verified above, at the versions shown.`,
    ),
    h(
      "p",
      { class: "muted" },
      custodial
        ? "Signed by the platform's custodial key for your department."
        : "Signed by your passkey; the platform relays it once your department's threshold of reviewers has signed.",
    ),
    button,
  );
  return h("div", {}, form, status);
}

async function decideCustodially(requestId, body, status) {
  const { decision, ...rest } = body;
  const path = decision === "APPROVED" ? "approve" : decision === "REJECTED" ? "reject" : "request-changes";
  const answer = await post(`/requests/${requestId}/${path}`, rest);
  status.hidden = false;
  status.className = "status ok";
  status.dataset.state = "SUBMITTED";
  status.replaceChildren(
    h("strong", {}, `${humanise(decision)}: recorded on chain`),
    h("div", { class: "mono" }, `tx ${answer.transactionHash}`),
    h("div", {}, "Signed by the platform's custodial key for your department."),
  );
  await showOnChainRecord(status, answer.transactionHash);
}

/** A signing request's state; signs it with this reviewer's passkey when asked to and possible. */
async function showSigning(status, signing, sign) {
  const render = (current) => {
    status.hidden = false;
    status.dataset.state = current.status;
    status.className =
      current.status === "SUBMITTED" ? "status ok" : current.status === "COLLECTING" ? "status" : "status bad";
    status.replaceChildren(...signingSummary(current));
  };
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
  const record = {
    ...(summary.decision === "REJECTED" ? { reason: summary.reason } : {}),
    remarks: summary.remarks ?? "",
    ...(summary.decision === "CHANGES_REQUESTED" ? { requiredDocuments: summary.requiredDocuments ?? [] } : {}),
  };
  return JSON.stringify(record); // keys written in sorted order above
}

/**
 * The challenge to sign, computed here from the typed data (never the server's digest taken on trust), after
 * checking that what the page shows is what the typed data says: a server that showed one decision and asked for a
 * signature over another is refused before the passkey prompt.
 */
async function challengeOf(signing) {
  const { TypedDataEncoder, keccak256, toUtf8Bytes, getBytes, getAddress } =
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
  let binary = "";
  for (const byte of getBytes(digest)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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

function signingSummary(s) {
  const signed = s.signatures ?? [];
  const summary = s.summary ?? {};
  const what =
    s.kind === "DECISION"
      ? [
          h(
            "div",
            {},
            `Decision: ${humanise(summary.decision)}${summary.reason ? ` (${humanise(summary.reason)})` : ""} · “${summary.remarks ?? ""}”`,
          ),
          summary.documents?.length
            ? h(
                "ul",
                { class: "list" },
                summary.documents.map((d) =>
                  h("li", { class: "mono" }, `v${d.version} · SHA-256 ${short(d.sha256 ?? "")}`),
                ),
              )
            : h("div", { class: "muted" }, "No document covered."),
        ]
      : s.kind === "KEY_PROOF"
        ? [
            h(
              "div",
              {},
              `Key proof: the passkey account ${summary.wallet} becomes ${summary.departmentCode}'s wallet (held by its reviewers).`,
            ),
            h("div", {}, "Passkeys that will sign for the department:"),
            h(
              "ul",
              { class: "list", id: "account-reviewers" },
              (summary.reviewers ?? []).map((r) =>
                h(
                  "li",
                  { class: r.reviewerName ? "" : "bad" },
                  r.reviewerName
                    ? `${r.reviewerName} (${r.deviceName}) · ${short(r.publicKey)}`
                    : `Not a passkey of your department's reviewers: ${short(r.publicKey)}`,
                ),
              ),
            ),
          ]
        : h(
            "div",
            {},
            `Reviewer change: add ${summary.add?.length ?? 0}, remove ${summary.remove?.length ?? 0}, threshold ${summary.threshold}.`,
          );
  return [
    h(
      "strong",
      { class: "signing-state" },
      s.status === "COLLECTING"
        ? `Collecting signatures: ${signed.length} of ${s.threshold}`
        : s.status === "SUBMITTED"
          ? "Submitted on chain"
          : humanise(s.status),
    ),
    ...(Array.isArray(what) ? what : [what]),
    signed.length
      ? h(
          "ul",
          { class: "list" },
          signed.map((x) => h("li", {}, `Signed by ${x.reviewerName} · ${when(x.signedAt)}`)),
        )
      : "",
    s.transactionHash ? h("div", { class: "mono", id: "signing-tx" }, `tx ${s.transactionHash}`) : "",
    s.failure ? h("div", {}, `${s.failure.code ?? ""} ${s.failure.message ?? ""}`) : "",
    s.status === "COLLECTING" ? h("div", { class: "muted" }, `Expires ${when(s.expiresAt)}`) : "",
  ];
}

/** The decision as the chain recorded it (signer, custody, block), once the index has the transaction. */
async function showOnChainRecord(status, transactionHash) {
  const record = h("div", { id: "chain-record", class: "muted" }, "Waiting for the chain's record…");
  status.append(record);
  for (let attempt = 0; attempt < 30; attempt++) {
    const { decisions } = await get(`/console/decisions?q=${transactionHash}&limit=1`);
    const [found] = decisions;
    if (found) {
      record.className = "";
      record.dataset.signer = found.signer;
      record.replaceChildren(
        h(
          "div",
          {},
          `On chain, block ${found.blockNumber}: signer `,
          h("span", { class: "mono", id: "chain-signer" }, found.signer),
        ),
        h(
          "div",
          {},
          found.custodyLabel,
          found.reviewers.length ? `: ${found.reviewers.map((r) => r.reviewerName).join(", ")}` : "",
        ),
        h("a", { href: found.verifyUrl, target: "_blank", rel: "noopener" }, "Public verification"),
      );
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  record.textContent = "The chain's record is not indexed yet: see the history later.";
}

// ---- history ----------------------------------------------------------------------------------------------------

export function historyView(view, _session, params) {
  const state = { q: params.get("q") ?? "", page: 1 };
  const reload = () => load().catch((error) => say(errorText(error)));
  const search = h("input", {
    id: "history-q",
    type: "search",
    value: state.q,
    placeholder: "Request number, applicant, remarks, decision, transaction…",
  });
  const list = h("ol", { class: "list", id: "history" });
  const pager = h("div", { class: "pager" });
  view.replaceChildren(
    h("h1", {}, "Past decisions"),
    h(
      "form",
      {
        class: "row card",
        onsubmit: (e) => {
          e.preventDefault();
          state.q = search.value;
          state.page = 1;
          void reload();
        },
      },
      search,
      h("button", { type: "submit", id: "history-search" }, "Search"),
    ),
    list,
    pager,
  );
  async function load() {
    const query = new URLSearchParams({ page: String(state.page), limit: "20" });
    if (state.q.trim()) query.set("q", state.q.trim());
    const { decisions, pagination } = await get(`/console/decisions?${query}`);
    list.replaceChildren(
      ...(decisions.length
        ? decisions.map((d) =>
            h(
              "li",
              { class: "card", dataset: { requestId: d.requestId } },
              h("strong", {}, `${d.requestNumber} · ${humanise(d.decision)}`),
              ` · stage ${d.stage} · ${when(d.decidedAt)}`,
              d.isActive ? "" : h("span", { class: "badge warn" }, humanise(d.status)),
              h("div", {}, `“${d.remarks}”${d.reason ? ` · ${humanise(d.reason)}` : ""}`),
              h(
                "div",
                { class: "muted" },
                d.custodyLabel,
                d.reviewers.length ? `: ${d.reviewers.map((r) => r.reviewerName).join(", ")}` : "",
              ),
              h(
                "div",
                { class: "mono" },
                `signer ${d.signer} · block ${d.blockNumber} · tx ${short(d.transactionHash)}`,
              ),
              h("a", { href: d.verifyUrl, target: "_blank", rel: "noopener" }, "Public verification"),
            ),
          )
        : [h("li", { class: "muted" }, "No decisions found.")]),
    );
    pager.replaceChildren(
      h(
        "button",
        {
          class: "secondary",
          disabled: state.page <= 1,
          onclick: () => {
            state.page--;
            void reload();
          },
        },
        "Previous",
      ),
      h("span", {}, `Page ${pagination.page} of ${Math.max(pagination.totalPages, 1)}`),
      h(
        "button",
        {
          class: "secondary",
          disabled: state.page >= pagination.totalPages,
          onclick: () => {
            state.page++;
            void reload();
          },
        },
        "Next",
      ),
    );
    view.dataset.loaded = String(Date.now());
  }
  void reload();
}

// ---- signing requests -------------------------------------------------------------------------------------------

export function signingView(view, _session) {
  const list = h("div", { id: "signing" });
  view.replaceChildren(
    h("h1", {}, "Waiting for signatures"),
    h(
      "p",
      { class: "lead" },
      "Decisions, key proofs and reviewer changes of your department's passkey account, until enough reviewers have signed.",
    ),
    list,
  );
  async function load() {
    const { signingRequests = [] } = (await get("/console/signing-requests?status=COLLECTING")) ?? {};
    list.replaceChildren(
      ...(signingRequests.length
        ? signingRequests.map((s) => {
            const status = h("div", { class: "status" }, ...signingSummary(s));
            const button = h(
              "button",
              { type: "button", disabled: !s.allowCredentials?.length },
              s.allowCredentials?.length ? "Sign with my passkey" : "Signed (or not yours to sign)",
            );
            button.addEventListener("click", () =>
              act(button, async () => {
                const now = await showSigning(status, s, true);
                // Signed by this reviewer (or relayed): nothing left for them to sign here.
                button.hidden = now.status !== "COLLECTING" || !now.allowCredentials?.length;
              }),
            );
            return h(
              "div",
              { class: "card", dataset: { signingRequestId: s.id } },
              s.requestId ? h("a", { href: `#/requests/${s.requestId}` }, "Open the request") : "",
              status,
              button,
            );
          })
        : [h("p", { class: "muted" }, "Nothing is waiting for signatures.")]),
    );
    view.dataset.loaded = String(Date.now());
  }
  void load().catch((error) => say(errorText(error)));
  return () => load();
}
