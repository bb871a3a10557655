// Forget: invalidate a fact (it leaves every checkout, stays in the log) or erase events for real (their content
// leaves the log and every derived store), after a confirmation that lists exactly what becomes unrecoverable.
import { api, badge, citeLink, clear, errorBox, field, h, plural, route, sessionPath, state, table, when } from "./core.js";

export async function renderForget(target, session) {
  if (!state.me || !state.me.admin) {
    clear(target, h("p", { class: "muted" }, "Forgetting needs the admin token (ZAXY_ADMIN_TOKEN, or the token zaxy ui printed)."));
    return;
  }
  const invalidate = h("section", { class: "card" });
  const erase = h("section", { class: "card", "data-testid": "erase" });
  clear(target, invalidate, erase);
  renderInvalidate(invalidate, session);
  await renderErase(erase, session);
}

function renderInvalidate(target, session) {
  const name = h("input", { name: "entity", placeholder: "entity name" });
  const type = h("input", { name: "entity_type", placeholder: "type", value: "fact" });
  const reason = h("input", { name: "reason", placeholder: "why it is no longer true" });
  const result = h("div");
  const form = h(
    "form",
    { class: "filters" },
    field("Entity", name),
    field("Type", type),
    field("Reason", reason),
    h("button", { type: "submit" }, "Invalidate"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const done = await api(sessionPath(session, "/invalidate"), {
        method: "POST",
        body: { entity: name.value, entity_type: type.value, reason: reason.value },
      });
      clear(result, h("p", { class: "ok" }, "Invalidated by ", citeLink(done.citation), ". The fact stays in the log, closed; checkouts no longer return it."));
    } catch (error) {
      clear(result, errorBox(error));
    }
  });
  clear(
    target,
    h("h2", {}, "Invalidate a fact"),
    h("p", { class: "muted" }, "Closes the fact's validity window with a memory.invalidated event: reversible by asserting it again, nothing is deleted."),
    form,
    result,
  );
}

async function renderErase(target, session) {
  const head = (await api(sessionPath(session, "/events"), { params: { limit: 1 } })).head_seq;
  const from = h("input", { name: "from_seq", type: "number", min: 1, max: head, value: 1, "data-testid": "erase-from" });
  const to = h("input", { name: "to_seq", type: "number", min: 1, max: head, value: head, "data-testid": "erase-to" });
  const reason = h("input", { name: "reason", placeholder: "why (recorded; never the content)", "data-testid": "erase-reason" });
  const preview = h("div", { "data-testid": "erase-preview" });
  const form = h(
    "form",
    { class: "filters" },
    field("From seq", from),
    field("To seq", to),
    field("Reason", reason),
    h("button", { type: "submit", "data-testid": "erase-preview-button" }, "Show what would be erased"),
    h("button", { type: "button", onclick: () => { from.value = 1; to.value = head; } }, "Whole session"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const data = await api(sessionPath(session, "/erase/preview"), {
        method: "POST",
        body: { from_seq: Number(from.value), to_seq: Number(to.value) },
      });
      clear(preview, previewView(session, data, reason));
    } catch (error) {
      clear(preview, errorBox(error));
    }
  });
  clear(
    target,
    h("h2", {}, "Erase events"),
    h("p", { class: "muted" }, `Session ${session} has ${head} events.`),
    form,
    preview,
  );
}

function previewView(session, data, reason) {
  const phrase = h("input", { name: "confirm", placeholder: data.confirm, autocomplete: "off", "data-testid": "erase-confirm" });
  const go = h("button", { type: "button", disabled: true, class: "danger", "data-testid": "erase-go" }, `Erase ${plural(data.event_count, "event")} for good`);
  const result = h("div");
  phrase.addEventListener("input", () => {
    go.disabled = !data.available || phrase.value !== data.confirm;
  });
  go.addEventListener("click", async () => {
    try {
      const done = await api(sessionPath(session, "/erase"), {
        method: "POST",
        body: { from_seq: data.from_seq, to_seq: data.to_seq, reason: reason.value || null, confirm: phrase.value },
      });
      clear(result, h("p", { class: "ok", "data-testid": "erase-done" }, `Erased ${plural(done.erased ?? data.event_count, "event")}. `, done.record ? citeLink(done.record, "erasure record") : null), h("p", {}, h("a", { href: route("s", session, "timeline") }, "Back to the timeline")));
      go.disabled = true;
    } catch (error) {
      clear(result, errorBox(error));
    }
  });
  return h(
    "div",
    { class: "confirm" },
    h("h3", {}, "This becomes unrecoverable"),
    h(
      "ul",
      {},
      h("li", {}, `the content (payload) of ${plural(data.event_count, "event")}, seq ${data.from_seq} to ${data.to_seq}, in the log`),
      h("li", {}, `${data.entity_versions.length} entity versions they asserted, and every edge, index entry, vector and cache built from them`),
      h("li", {}, "what stays: each event's seq, type, time, actor and hashes (the chain still verifies), and one eventloom.erased record saying who erased what range and why (never the content)"),
    ),
    data.already_erased ? h("p", { class: "muted" }, `${data.already_erased} of them are already erased.`) : null,
    table(
      ["Seq", "Type", "Actor", "Time", "Citation"],
      data.events.map((event) =>
        h("tr", {}, h("td", { class: "num" }, String(event.seq)), h("td", {}, event.type, event.erased ? badge("erased", "muted") : null), h("td", {}, event.actor), h("td", {}, when(event.timestamp)), h("td", {}, citeLink(event.citation))),
      ),
    ),
    data.entity_versions.length
      ? table(
          ["Entity", "Fact"],
          data.entity_versions.map((version) => h("tr", {}, h("td", {}, `${version.entity_type}: ${version.name}`), h("td", {}, version.summary))),
        )
      : null,
    data.available
      ? h("p", {}, "Type ", h("code", {}, data.confirm), " to confirm.")
      : h("p", { class: "error" }, "Erasing is not available in this version of zaxy: invalidate the fact instead."),
    phrase,
    go,
    result,
  );
}
