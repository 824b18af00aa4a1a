// The review console's router: hash routes (#/invite/<token>, #/sign-in, #/queue, #/requests/<id>, #/history,
// #/signing), the signed-in reviewer (GET /console/me), and the periodic refresh of the screen shown.
import { ApiError, clearStaleNotice, get, post, say } from "./api.js";
import { historyView, inviteView, queueView, requestView, signInView, signingView } from "./views.js";

const REFRESH_MS = 30_000;
const view = document.getElementById("view");
let session = null;
let refresh = null;

const currentSession = () =>
  get("/console/me").catch((error) => {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return null;
    throw error;
  });

function showSession() {
  document.getElementById("nav").hidden = !session;
  document.getElementById("who").hidden = !session;
  const name = session ? `${session.reviewer.name} · ${session.department.name}` : "";
  document.getElementById("who-name").textContent = name;
}

const go = (hash) => {
  if (location.hash === hash) void route();
  else location.hash = hash;
};

// After an invitation or a sign-in: the new session, then the screen it leads to.
async function signedIn(next) {
  session = await currentSession();
  showSession();
  go(next);
}

async function route() {
  refresh = null;
  delete view.dataset.loaded;
  clearStaleNotice();
  const [path, search = ""] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  const params = new URLSearchParams(search);
  if (parts[0] === "invite" && parts[1]) {
    showSession();
    return inviteView(view, session, decodeURIComponent(parts[1]), signedIn);
  }
  session ??= await currentSession();
  showSession();
  if (session && parts[0] === "sign-in") return go("#/queue");
  if (!session) return signInView(view, session, signedIn);
  for (const link of document.querySelectorAll("#nav a"))
    if (link.dataset.route === parts[0]) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  if (parts[0] === "requests" && parts[1]) return requestView(view, session, parts[1]);
  if (parts[0] === "history") return historyView(view, session, params);
  if (parts[0] === "signing") refresh = signingView(view, session);
  else if (parts[0] === "queue") refresh = queueView(view, session, params);
  else go("#/queue");
}

// A session that ended (idle, signed out elsewhere, reviewer removed) sends the reviewer back to sign in.
window.addEventListener("console:signed-out", () => {
  if (!session) return;
  session = null;
  say("Your session ended: sign in again.");
  go("#/sign-in");
});
window.addEventListener("hashchange", () => void route().catch((error) => say(error.message)));
// The queue and signing list are read again every 30 s while shown, and as soon as the reviewer comes back.
const reread = () => void refresh?.().catch(() => {});
const rereadIfShown = () => document.visibilityState === "visible" && reread();
setInterval(rereadIfShown, REFRESH_MS);
window.addEventListener("focus", reread);
document.addEventListener("visibilitychange", rereadIfShown);
document.getElementById("sign-out").addEventListener("click", async () => {
  await post("/console/sign-out", {}).catch(() => {});
  session = null;
  say("Signed out.", true);
  go("#/sign-in");
});

void route().catch((error) => say(error.message));
