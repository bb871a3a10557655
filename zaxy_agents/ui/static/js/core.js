// Shared pieces of the inspector page: building elements, calling the API, rendering citations and errors.
// Every piece of memory is put on the page as text (textContent / text nodes), never as HTML.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "value") node.value = value;
    else if (key === "checked" || key === "disabled" || key === "hidden") node[key] = Boolean(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || { code: "error", message: `HTTP ${status}` };
    super(error.message);
    this.status = status;
    this.error = error;
  }
}

export async function api(path, { method = "GET", body, params } = {}) {
  let url = path;
  if (params) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === null || value === undefined || value === "") continue;
      for (const item of Array.isArray(value) ? value : [value]) query.append(key, item);
    }
    const text = query.toString();
    if (text) url += `?${text}`;
  }
  const init = { method, headers: { "x-zaxy-ui": "1" }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export function sessionPath(session, rest = "") {
  return `/api/sessions/${encodeURIComponent(session)}${rest}`;
}

export function route(...parts) {
  return "#/" + parts.map((part) => encodeURIComponent(String(part))).join("/");
}

export function citeLink(citation, label) {
  if (!citation) return h("span", { class: "muted" }, "no citation");
  return h("a", { class: "cite", href: route("cite", citation), title: "Open and verify this event" }, label || citation);
}

export function errorBox(error) {
  const detail = error && error.error ? error.error : { code: "error", message: String(error) };
  return h(
    "div",
    { class: "error", role: "alert", "data-testid": "error" },
    h("strong", {}, detail.code),
    detail.field ? h("span", { class: "muted" }, ` (field: ${detail.field})`) : null,
    ": ",
    detail.message,
    detail.remediation ? h("div", { class: "fix" }, "fix: ", detail.remediation) : null,
  );
}

export function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}` }, text);
}

export function when(timestamp) {
  if (!timestamp) return "";
  return timestamp.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function bytes(size) {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

export function preview(payload, limit = 160) {
  const text = JSON.stringify(payload ?? {});
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

export function table(headers, rows, attrs = {}) {
  return h(
    "table",
    attrs,
    h("thead", {}, h("tr", {}, headers.map((title) => h("th", {}, title)))),
    h("tbody", {}, rows),
  );
}

export function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

export const state = { me: null, session: null, live: null };
