// Entities of a session, and one entity's history: validity windows, what closed each version, edges.
import { api, badge, citeLink, clear, errorBox, field, h, route, sessionPath, state, table, when } from "./core.js";

export async function renderEntities(target, session, options = {}) {
  const search = h("input", { name: "text", placeholder: "name contains…", value: options.text || "" });
  const form = h("form", { class: "filters" }, field("Search", search), h("button", { type: "submit" }, "Search"));
  const chips = h("div", { class: "chips", "data-testid": "entity-types" });
  const body = h("div");
  const more = h("button", { type: "button", hidden: true }, "More");
  clear(target, form, chips, body, more);
  let kind = options.type || null;
  let offset = 0;

  async function load(reset) {
    if (reset) offset = 0;
    const data = await api(sessionPath(session, "/entities"), {
      params: { type: kind, text: search.value.trim(), offset, limit: 100 },
    });
    clear(
      chips,
      h("a", { href: "#", class: kind ? "chip" : "chip active", onclick: (e) => pick(e, null) }, "all"),
      Object.entries(data.types).map(([type, count]) =>
        h("a", { href: "#", class: `chip${kind === type ? " active" : ""}`, onclick: (e) => pick(e, type) }, `${type} ${count}`),
      ),
    );
    const rows = data.entities.map((entity) =>
      h(
        "tr",
        { "data-testid": "entity-row" },
        h("td", {}, h("a", { href: route("s", session, "entity", entity.entity_type, entity.name) }, entity.name)),
        h("td", {}, entity.entity_type),
        h("td", {}, entity.current ? entity.summary : h("span", { class: "muted" }, `(closed) ${entity.summary}`)),
        h("td", { class: "num" }, String(entity.versions)),
        h("td", {}, when(entity.valid_from)),
        h("td", {}, citeLink(entity.citation, "source")),
      ),
    );
    if (reset) clear(body, table(["Name", "Type", "Current fact", "Versions", "Since", "Provenance"], rows, { class: "entities" }));
    else body.querySelector("tbody").append(...rows);
    offset = data.next_offset ?? offset;
    more.hidden = data.next_offset === null;
  }

  function pick(event, type) {
    event.preventDefault();
    kind = type;
    load(true).catch((error) => target.append(errorBox(error)));
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load(true).catch((error) => target.append(errorBox(error)));
  });
  more.addEventListener("click", () => load(false).catch((error) => target.append(errorBox(error))));
  await load(true);
}

function versionStatus(version) {
  if (version.current) return badge("current", "ok");
  if (version.closed_by && version.closed_by.kind === "superseded") return badge("superseded", "warn");
  if (version.invalidated) return badge("invalidated", "bad");
  return badge("closed", "muted");
}

function closedBy(version) {
  const closure = version.closed_by;
  if (!closure) return "";
  return h(
    "span",
    {},
    `${closure.kind} at ${when(closure.at)}`,
    closure.citation ? h("span", {}, " by ", citeLink(closure.citation, closure.event_type || "event")) : " (closing event not identified)",
    closure.reason ? h("div", { class: "muted" }, `reason: ${closure.reason}`) : null,
  );
}

function edgeRow(session, edge) {
  const other = edge.other
    ? h("a", { href: route("s", session, "entity", edge.other.entity_type, edge.other.name) }, `${edge.other.entity_type}: ${edge.other.name}`)
    : h("span", { class: "muted" }, "unknown");
  return h(
    "tr",
    {},
    h("td", {}, edge.direction === "out" ? `→ ${edge.relation_type}` : `← ${edge.relation_type}`),
    h("td", {}, other),
    h("td", {}, edge.inferred ? `inferred (${edge.method}, ${edge.confidence})` : "stated"),
    h("td", {}, edge.valid_to ? `${when(edge.valid_from)} → ${when(edge.valid_to)}` : `since ${when(edge.valid_from)}`),
    h("td", {}, citeLink(edge.citation, "source"), edge.evidence && edge.evidence !== edge.citation ? h("span", {}, " evidence ", citeLink(edge.evidence, "event")) : null),
  );
}

export async function renderEntity(target, session, type, name) {
  const data = await api(sessionPath(session, "/entity"), { params: { type, name } });
  const current = data.versions[data.versions.length - 1];
  const actions = h("div", { class: "actions" });
  if (state.me && state.me.admin && data.current) {
    const reason = h("input", { name: "reason", placeholder: "why it is no longer true", "data-testid": "invalidate-reason" });
    const result = h("div");
    actions.append(
      h(
        "form",
        {
          class: "inline",
          "data-testid": "invalidate-form",
          onsubmit: async (event) => {
            event.preventDefault();
            try {
              const done = await api(sessionPath(session, "/invalidate"), {
                method: "POST",
                body: { entity: data.name, entity_type: data.entity_type, reason: reason.value },
              });
              clear(result, h("p", { class: "ok" }, "Invalidated by ", citeLink(done.citation)));
              await renderEntity(target, session, type, name);
            } catch (error) {
              clear(result, errorBox(error));
            }
          },
        },
        field("Invalidate this fact", reason),
        h("button", { type: "submit" }, "Invalidate"),
      ),
      result,
    );
  }
  clear(
    target,
    h(
      "section",
      { class: "card", "data-testid": "entity-detail" },
      h("h2", {}, `${data.entity_type}: ${data.name} `, data.current ? badge("current", "ok") : badge("closed", "muted")),
      h("p", {}, current.summary),
      h(
        "p",
        {},
        h("a", { href: route("s", session, "cognitive", data.entity_type, data.name) }, "Causal graph around this entity"),
      ),
      actions,
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, `Versions (${data.versions.length})`),
      table(
        ["#", "Fact", "Valid", "Status", "Closed by", "Provenance"],
        data.versions.map((version, index) =>
          h(
            "tr",
            { "data-testid": "version-row" },
            h("td", { class: "num" }, String(index + 1)),
            h("td", {}, version.summary),
            h("td", {}, `${when(version.valid_from)} → ${version.valid_to ? when(version.valid_to) : "now"}`),
            h("td", {}, versionStatus(version)),
            h("td", {}, closedBy(version)),
            h("td", {}, citeLink(version.citation, version.source_event_type)),
          ),
        ),
      ),
    ),
    data.out_edges.length + data.in_edges.length
      ? h(
          "section",
          { class: "card" },
          h("h2", {}, "Relations"),
          table(["Relation", "Other entity", "Kind", "Valid", "Provenance"], [...data.out_edges, ...data.in_edges].map((edge) => edgeRow(session, edge))),
        )
      : null,
  );
}
