// Timeline (filters, paging, live updates) and one event with its proof.
import { api, badge, citeLink, clear, errorBox, field, h, preview, route, sessionPath, state, when } from "./core.js";

const filters = new Map(); // session -> last filters used, so coming back keeps them

export function stopLive() {
  if (state.live) {
    state.live.close();
    state.live = null;
  }
}

function filterValues(form) {
  const data = new FormData(form);
  const types = String(data.get("type") || "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
  return {
    type: types,
    actor: String(data.get("actor") || "").trim(),
    since: String(data.get("since") || "").trim(),
    until: String(data.get("until") || "").trim(),
    text: String(data.get("text") || "").trim(),
  };
}

function eventRow(session, event, fresh = false) {
  return h(
    "li",
    { class: `event${fresh ? " fresh" : ""}${event.erased ? " erased" : ""}`, "data-seq": event.seq, "data-testid": "event-row" },
    h(
      "div",
      { class: "event-head" },
      h("a", { class: "seq", href: route("s", session, "event", event.seq) }, `#${event.seq}`),
      h("span", { class: "type" }, event.type),
      h("span", { class: "muted" }, event.actor),
      h("span", { class: "muted" }, when(event.timestamp)),
      event.erased ? badge("erased", "bad") : null,
    ),
    h("div", { class: "payload" }, event.erased ? "(content erased)" : preview(event.payload, 240)),
    h("div", { class: "event-cite" }, citeLink(event.citation)),
  );
}

export async function renderTimeline(target, session) {
  const saved = filters.get(session) || { type: [], actor: "", since: "", until: "", text: "" };
  const form = h(
    "form",
    { class: "filters", "data-testid": "timeline-filters" },
    field("Type", h("input", { name: "type", value: saved.type.join(", "), placeholder: "task.*, fact.asserted" })),
    field("Actor", h("input", { name: "actor", value: saved.actor, placeholder: "agent" })),
    field("Since", h("input", { name: "since", value: saved.since, placeholder: "2026-03-12 / 3 days ago" })),
    field("Until", h("input", { name: "until", value: saved.until, placeholder: "now" })),
    field("Text", h("input", { name: "text", value: saved.text, placeholder: "words in the payload" })),
    h("button", { type: "submit" }, "Filter"),
    h("label", { class: "live" }, h("input", { type: "checkbox", name: "live", checked: true }), " Live"),
  );
  const list = h("ol", { class: "events", "data-testid": "timeline" });
  const status = h("p", { class: "muted", "data-testid": "timeline-status" });
  const more = h("button", { type: "button", hidden: true, "data-testid": "older" }, "Older events");
  clear(target, form, status, list, more);
  let top = 0;
  let nextBefore = null;

  async function load(reset) {
    const values = filterValues(form);
    filters.set(session, values);
    const page = await api(sessionPath(session, "/events"), {
      params: { ...values, limit: 50, before_seq: reset ? null : nextBefore },
    });
    if (reset) {
      list.replaceChildren();
      top = page.head_seq;
    }
    for (const event of page.events) list.append(eventRow(session, event));
    nextBefore = page.next_before_seq;
    more.hidden = nextBefore === null;
    status.textContent = `${list.children.length} events shown of ${page.head_seq} in the session (newest first)`;
  }

  async function catchUp(headSeq) {
    if (headSeq <= top) return;
    const values = filterValues(form);
    const page = await api(sessionPath(session, "/events"), {
      params: { ...values, after_seq: top, before_seq: headSeq + 1, limit: 500 },
    });
    top = headSeq;
    for (const event of page.events.slice().reverse()) list.prepend(eventRow(session, event, true));
    status.textContent = `${list.children.length} events shown of ${page.head_seq} in the session (newest first)`;
  }

  function follow() {
    stopLive();
    if (!form.elements.live.checked) return;
    const source = new EventSource(sessionPath(session, `/live?after_seq=${top}`));
    let pending = Promise.resolve();
    source.addEventListener("head", (message) => {
      const data = JSON.parse(message.data);
      pending = pending.then(() => catchUp(data.head_seq)).catch((error) => target.prepend(errorBox(error)));
    });
    state.live = source;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await load(true);
      follow();
    } catch (error) {
      target.prepend(errorBox(error));
    }
  });
  form.elements.live.addEventListener("change", follow);
  more.addEventListener("click", () => load(false).catch((error) => target.append(errorBox(error))));
  await load(true);
  follow();
}

function hashRow(label, value, ok) {
  return h(
    "tr",
    {},
    h("th", {}, label),
    h("td", { class: "hash" }, value ?? ""),
    h("td", {}, ok === undefined || ok === null ? "" : ok ? badge("match", "ok") : badge("MISMATCH", "bad")),
  );
}

function proofView(data) {
  const proof = data.proof;
  const previous = proof.previous;
  return h(
    "section",
    { class: "card proof", "data-testid": "proof" },
    h(
      "h2",
      {},
      "Proof ",
      proof.hash_ok && proof.prev_link_ok ? badge("verified", "ok") : badge("does not verify", "bad"),
    ),
    h(
      "table",
      { class: "kv" },
      hashRow("stored hash", proof.stored_hash),
      hashRow("recomputed hash", proof.recomputed_hash, proof.hash_ok),
      hashRow("prev_hash", proof.prev_hash, proof.prev_link_ok),
      h(
        "tr",
        {},
        h("th", {}, "previous event"),
        h(
          "td",
          { colspan: 2 },
          proof.genesis
            ? "none: this is the first event (prev_hash is 64 zeros)"
            : previous
              ? h("span", {}, h("a", { href: route("s", data.session, "event", previous.seq) }, `#${previous.seq} ${previous.type}`), " hash ", h("code", {}, previous.hash))
              : "missing",
        ),
      ),
      h(
        "tr",
        {},
        h("th", {}, "next event"),
        h(
          "td",
          { colspan: 2 },
          proof.next
            ? h(
                "span",
                {},
                h("a", { href: route("s", data.session, "event", proof.next.seq) }, `#${proof.next.seq} ${proof.next.type}`),
                " links back: ",
                proof.next_link_ok ? badge("yes", "ok") : badge("NO", "bad"),
              )
            : "none yet (head of the session)",
        ),
      ),
    ),
  );
}

function eventView(target, data) {
  const envelope = data.envelope;
  clear(
    target,
    h(
      "section",
      { class: "card", "data-testid": "event-detail" },
      h("h2", {}, `Event #${data.seq} `, h("span", { class: "type" }, envelope.type || "")),
      h("p", {}, citeLink(data.citation)),
      h(
        "table",
        { class: "kv" },
        h("tr", {}, h("th", {}, "session"), h("td", {}, h("a", { href: route("s", data.session) }, data.session))),
        h("tr", {}, h("th", {}, "actor"), h("td", {}, envelope.actor ?? "")),
        h("tr", {}, h("th", {}, "time"), h("td", {}, envelope.timestamp ?? "")),
        h("tr", {}, h("th", {}, "id"), h("td", {}, envelope.id ?? "")),
      ),
      h("h3", {}, "Payload"),
      "erased" in envelope || "tombstone" in envelope
        ? h("p", { class: "muted" }, "The content of this event was erased; its hashes keep the chain.")
        : h("pre", { class: "json", "data-testid": "payload" }, JSON.stringify(envelope.payload, null, 2)),
    ),
    proofView(data),
    data.entities.length
      ? h(
          "section",
          { class: "card" },
          h("h2", {}, "Entities this event asserted"),
          h(
            "ul",
            {},
            data.entities.map((version) =>
              h(
                "li",
                {},
                h("a", { href: route("s", data.session, "entity", version.entity_type, version.name) }, `${version.entity_type}: ${version.name}`),
                " — ",
                version.summary,
              ),
            ),
          ),
        )
      : null,
    h(
      "p",
      { class: "pager" },
      data.seq > 1 ? h("a", { href: route("s", data.session, "event", data.seq - 1) }, "← previous") : null,
      " ",
      data.proof.next ? h("a", { href: route("s", data.session, "event", data.seq + 1) }, "next →") : null,
    ),
  );
}

export async function renderEvent(target, session, seq) {
  eventView(target, await api(sessionPath(session, `/events/${seq}`)));
}

export async function renderCitation(target, citation) {
  clear(target, h("p", { class: "muted" }, `Resolving ${citation}…`));
  try {
    const data = await api("/api/citation", { params: { c: citation } });
    const body = h("div", { class: "view" });
    clear(target, h("div", { class: "session-head" }, h("h1", {}, "Citation"), h("p", { class: "hash" }, citation)), body);
    eventView(body, data);
  } catch (error) {
    clear(target, h("h1", {}, "Citation"), h("p", { class: "hash" }, citation), errorBox(error));
  }
}
