// Calls to this server's API with the console session cookie (same origin; the browser adds Origin, which the API
// checks on every change), and small DOM helpers that never parse text as HTML.

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? "HTTP_ERROR";
    this.details = body?.details;
  }
}

/** JSON in, JSON out; an error answer throws ApiError (401 also tells the app to sign in again). */
export async function api(method, path, body) {
  const response = await fetch(`/api/v1${path}`, {
    method,
    credentials: "same-origin",
    headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = { code: "HTTP_ERROR", message: `The server answered ${response.status} without JSON` };
  }
  if (response.status === 401) window.dispatchEvent(new CustomEvent("console:signed-out"));
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
}

export const get = (path) => api("GET", path);
export const post = (path, body = {}) => api("POST", path, body);

/**
 * An element ("tag", "tag#id", "tag.class.class", "tag#id.class"), then optional attributes (on* are listeners),
 * then children (strings become text nodes).
 */
export function h(tag, ...children) {
  const attrs = children[0]?.constructor === Object ? children.shift() : {};
  const [name, ...classes] = tag.split(".");
  const [tagName, id] = name.split("#");
  const element = document.createElement(tagName);
  if (id) element.id = id;
  if (classes.length) element.className = classes.join(" ");
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Shows a message under the bar (a failure, or news when `ok`); an empty message hides it. */
export function say(message, ok = false) {
  const notice = document.getElementById("notice");
  Object.assign(notice, { textContent: message, className: ok ? "notice ok" : "notice", hidden: !message });
  notice.dataset.at = String(Date.now());
}

/** A notice stays for the screen it was shown on (or the one it sends the reviewer to), then goes. */
export function clearStaleNotice() {
  const notice = document.getElementById("notice");
  if (Date.now() - Number(notice.dataset.at ?? 0) > 1000) say("");
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

/** "in 3 h" / "5 d ago": how far a time is from now, roughly. */
export function relative(iso) {
  const seconds = (new Date(iso).getTime() - Date.now()) / 1000;
  const abs = Math.abs(seconds);
  const [size, unit] = abs < 90 ? [1, "s"] : abs < 5400 ? [60, "min"] : abs < 129600 ? [3600, "h"] : [86400, "d"];
  const n = Math.round(abs / size);
  return seconds >= 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

export const short = (hex, keep = 10) =>
  hex && hex.length > keep * 2 ? `${hex.slice(0, keep)}…${hex.slice(-6)}` : (hex ?? "");

export const humanise = (code) => `${code ?? ""}`.toLowerCase().replaceAll("_", " ");
