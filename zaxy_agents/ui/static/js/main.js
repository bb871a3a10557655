// Entry point: sign-in, the header, the session list and the router (#/...).
import { api, badge, bytes, clear, errorBox, h, route, state, table, when, sessionPath } from "./core.js";
import { renderTimeline, renderEvent, renderCitation, stopLive } from "./timeline.js";
import { renderEntities, renderEntity } from "./entities.js";
import { renderCheckout } from "./checkout.js";
import { renderCognitive } from "./cognitive.js";
import { renderForget } from "./forget.js";

const main = () => document.getElementById("main");
const chainCache = new Map();
let navigation = 0; // the latest route: an older one still loading must not draw over it

async function signIn(token) {
  await api("/login", { method: "POST", body: { token } });
}

async function start() {
  const hash = window.location.hash;
  if (hash.startsWith("#token=")) {
    const token = decodeURIComponent(hash.slice("#token=".length));
    history.replaceState(null, "", window.location.pathname + "#/");
    try {
      await signIn(token);
    } catch (error) {
      showSignIn(error);
      return;
    }
  }
  try {
    state.me = await api("/api/me");
  } catch (error) {
    if (error.status === 401) {
      showSignIn(null);
      return;
    }
    clear(main(), errorBox(error));
    return;
  }
  showHeader();
  window.addEventListener("hashchange", router);
  await router();
}

function showSignIn(error) {
  const input = h("input", { type: "password", id: "token", autocomplete: "off", placeholder: "token" });
  const form = h(
    "form",
    {
      class: "card sign-in",
      "data-testid": "sign-in",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await signIn(input.value);
          window.location.hash = "#/";
          window.location.reload();
        } catch (failure) {
          form.append(errorBox(failure));
        }
      },
    },
    h("h2", {}, "Sign in"),
    h("p", {}, "Paste the token zaxy ui printed, or your ZAXY_AUTH_TOKEN / ZAXY_ADMIN_TOKEN / session token."),
    input,
    h("button", { type: "submit" }, "Sign in"),
    error ? errorBox(error) : null,
  );
  clear(main(), form);
}

function showHeader() {
  const me = state.me;
  document.getElementById("memory").textContent = me.memory;
  const grant = document.getElementById("grant");
  grant.textContent = me.admin ? "admin" : me.session ? `session ${me.session} only` : "user";
  grant.className = `badge ${me.admin ? "warn" : ""}`;
  const out = document.getElementById("sign-out");
  out.hidden = false;
  out.onclick = async () => {
    await api("/logout", { method: "POST" });
    window.location.hash = "";
    window.location.reload();
  };
}

async function router() {
  stopLive();
  const ticket = ++navigation;
  const parts = window.location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const target = main();
  try {
    if (parts[0] === "cite" && parts[1]) {
      const body = h("div");
      clear(target, body);
      await renderCitation(body, parts.slice(1).join("/"));
    } else if (parts[0] === "s" && parts[1]) {
      state.session = parts[1];
      await renderSidebar();
      if (ticket !== navigation) return;
      const view = parts[2] || "timeline";
      const tabs = sessionTabs(parts[1], view);
      const body = h("div", { class: "view" });
      clear(target, tabs, body);
      if (view === "timeline") await renderTimeline(body, parts[1]);
      else if (view === "event") await renderEvent(body, parts[1], Number(parts[3]));
      else if (view === "entities") await renderEntities(body, parts[1]);
      else if (view === "entity") await renderEntity(body, parts[1], parts[3], parts.slice(4).join("/"));
      else if (view === "checkout") await renderCheckout(body, parts[1]);
      else if (view === "cognitive") await renderCognitive(body, parts[1], parts[3], parts[4]);
      else if (view === "forget") await renderForget(body, parts[1]);
      else clear(body, h("p", {}, "Unknown view."));
    } else {
      state.session = null;
      await renderSidebar();
      if (ticket !== navigation) return;
      const body = h("div");
      clear(target, body);
      await renderOverview(body);
    }
  } catch (error) {
    if (ticket === navigation) (target.lastChild || target).append(errorBox(error));
  }
  if (ticket === navigation) document.body.dataset.rendered = window.location.hash; // drawn (tests wait on it)
}

function sessionTabs(session, active) {
  const tabs = [
    ["timeline", "Timeline"],
    ["entities", "Entities"],
    ["checkout", "Checkout preview"],
    ["cognitive", "Cognitive"],
    ["forget", "Forget"],
  ];
  return h(
    "div",
    { class: "session-head" },
    h("h1", { "data-testid": "session-title" }, session),
    h(
      "nav",
      { class: "tabs" },
      tabs.map(([view, label]) =>
        h("a", { href: route("s", session, view), class: view === active || (active === "event" && view === "timeline") || (active === "entity" && view === "entities") ? "active" : "", "data-testid": `tab-${view}` }, label),
      ),
    ),
  );
}

async function loadSessions() {
  const data = await api("/api/sessions");
  const groups = new Map();
  for (const row of data.sessions) {
    const key = row.workspace || "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(row);
  }
  return [...groups.entries()].sort(([a], [b]) => (a === "" ? 1 : b === "" ? -1 : a.localeCompare(b)));
}

function chainBadge(session, known) {
  const holder = h("button", { type: "button", class: "chain", "data-session": session }, badge("checking…", "muted"));
  const show = (status) => {
    clear(
      holder,
      status.status === "verified"
        ? badge("verified", "ok")
        : badge(`damaged at seq ${status.first_broken_seq ?? "?"}`, "bad"),
    );
    const what = status.reason || `chain of ${status.event_count} events recomputed`;
    holder.title = `${what}; checked ${when(status.verified_at)} — click to check again`;
  };
  const check = (refresh) => {
    clear(holder, badge("checking…", "muted"));
    api(sessionPath(session, "/chain"), { params: { refresh: refresh ? 1 : null } })
      .then((status) => {
        chainCache.set(session, status);
        show(status);
      })
      .catch((error) => clear(holder, badge(error.error ? error.error.code : "error", "bad")));
  };
  holder.addEventListener("click", () => check(true));
  const cached = known || chainCache.get(session);
  if (cached) show(cached);
  else check(false);
  return holder;
}

async function renderSidebar() {
  const sidebar = document.getElementById("sidebar");
  let groups;
  try {
    groups = await loadSessions();
  } catch (error) {
    clear(sidebar, errorBox(error));
    return;
  }
  clear(
    sidebar,
    h("a", { href: "#/", class: "all" }, "All sessions"),
    groups.map(([workspace, rows]) =>
      h(
        "section",
        { class: "workspace" },
        h("h3", {}, workspace ? `workspace ${workspace}` : "other sessions"),
        h(
          "ul",
          {},
          rows.map((row) =>
            h(
              "li",
              { class: row.session === state.session ? "active" : "" },
              h("a", { href: route("s", row.session), "data-testid": "session-link" }, row.session),
              h("span", { class: "muted count" }, `${row.event_count}`),
            ),
          ),
        ),
      ),
    ),
  );
}

async function renderOverview(target) {
  const groups = await loadSessions();
  if (!groups.length) {
    clear(target, h("h1", {}, "Sessions"), h("p", {}, "No sessions yet: nothing has been remembered here."));
    return;
  }
  clear(
    target,
    h("h1", {}, "Sessions"),
    groups.map(([workspace, rows]) =>
      h(
        "section",
        { class: "card" },
        h("h2", {}, workspace ? `Workspace ${workspace}` : "Other sessions"),
        table(
          ["Session", "Client", "Events", "Size", "Last activity", "Chain"],
          rows.map((row) =>
            h(
              "tr",
              { "data-testid": "session-row" },
              h("td", {}, h("a", { href: route("s", row.session) }, row.session)),
              h("td", {}, row.client || ""),
              h("td", { class: "num" }, String(row.event_count)),
              h("td", { class: "num" }, bytes(row.size_bytes)),
              h("td", {}, when(row.last_activity)),
              h("td", {}, chainBadge(row.session, row.chain)),
            ),
          ),
          { class: "sessions" },
        ),
      ),
    ),
  );
}

start();
