// Cognitive views: causal edges around an entity (a small graph), the consolidation review queue, known
// unknowns and belief proposals.
import { api, badge, citeLink, clear, errorBox, field, h, route, sessionPath, table } from "./core.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

export async function renderCognitive(target, session, type, name) {
  const causal = h("section", { class: "card", "data-testid": "causal" });
  const queue = h("section", { class: "card", "data-testid": "review-queue" });
  const unknowns = h("section", { class: "card", "data-testid": "uncertainty" });
  clear(target, causal, queue, unknowns);
  renderCausal(causal, session, type, name);
  await Promise.all([renderQueue(queue, session), renderUncertainty(unknowns, session)]);
}

function renderCausal(target, session, type, name) {
  const entity = h("input", { name: "entity", value: name || "", placeholder: "entity name", "data-testid": "causal-entity" });
  const kind = h("input", { name: "type", value: type || "", placeholder: "type (optional)" });
  const depth = h("input", { name: "depth", type: "number", min: 1, max: 4, value: 2 });
  const graph = h("div", { class: "graph", "data-testid": "causal-graph" });
  const form = h(
    "form",
    { class: "filters" },
    field("Entity", entity),
    field("Type", kind),
    field("Depth", depth),
    h("button", { type: "submit" }, "Show causes and effects"),
  );
  async function show() {
    if (!entity.value.trim()) {
      clear(graph, h("p", { class: "muted" }, "Name an entity (from the Entities tab) to see what caused it and what it caused."));
      return;
    }
    try {
      const data = await api(sessionPath(session, "/causal"), {
        params: { entity: entity.value.trim(), type: kind.value.trim(), depth: depth.value },
      });
      clear(graph, causalGraph(session, data));
    } catch (error) {
      clear(graph, errorBox(error));
    }
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    show();
  });
  clear(target, h("h2", {}, "Causal edges"), form, graph);
  show();
}

function causalGraph(session, data) {
  const center = data.successors.start[0] || data.predecessors.start[0] || { name: data.successors.entity_name };
  const key = (point) => `${point.entity_type}\u001f${point.name}`;
  const left = new Map();
  const right = new Map();
  const edges = [];
  for (const hit of data.predecessors.results) {
    if (key(hit.source) !== key(center)) left.set(key(hit.source), hit.source);
    edges.push(hit);
  }
  for (const hit of data.successors.results) {
    if (key(hit.target) !== key(center)) right.set(key(hit.target), hit.target);
    edges.push(hit);
  }
  const rows = Math.max(left.size, right.size, 1);
  const width = 760;
  const height = Math.max(140, rows * 56 + 40);
  const place = new Map([[key(center), { x: width / 2, y: height / 2, point: center }]]);
  const column = (points, x) =>
    [...points.values()].forEach((point, index) => place.set(key(point), { x, y: height / 2 + (index - (points.size - 1) / 2) * 56, point }));
  column(left, 120);
  column(right, width - 120);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": "causal graph" });
  root.append(svg("defs", {}), svg("g", {}));
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }));
  root.firstChild.append(marker);
  for (const hit of edges) {
    const from = place.get(key(hit.source));
    const to = place.get(key(hit.target));
    if (!from || !to) continue;
    root.append(svg("line", { x1: from.x + 70, y1: from.y, x2: to.x - 70, y2: to.y, class: hit.stale ? "edge stale" : "edge", "marker-end": "url(#arrow)" }));
    const label = svg("text", { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 - 6, class: "edge-label", "text-anchor": "middle" }, `${hit.relation_type} ${hit.confidence}`);
    root.append(label);
  }
  for (const { x, y, point } of place.values()) {
    const link = svg("a", { href: route("s", session, "entity", point.entity_type || "", point.name) });
    link.append(svg("rect", { x: x - 70, y: y - 18, width: 140, height: 36, rx: 6, class: key(point) === key(center) ? "node center" : "node" }));
    link.append(svg("text", { x, y: y + 4, "text-anchor": "middle", class: "node-label" }, point.name.length > 20 ? `${point.name.slice(0, 19)}…` : point.name));
    root.append(link);
  }
  const list = edges.length
    ? table(
        ["Cause", "Relation", "Effect", "Confidence", "Evidence"],
        edges.map((hit) =>
          h(
            "tr",
            { "data-testid": "causal-edge" },
            h("td", {}, hit.source.name),
            h("td", {}, hit.relation_type, hit.stale ? badge("stale", "warn") : null),
            h("td", {}, hit.target.name),
            h("td", { class: "num" }, String(hit.confidence)),
            h("td", {}, citeLink(hit.citation, "edge"), " ", hit.evidence_resolves ? badge("evidence resolves", "ok") : badge("evidence missing", "bad")),
          ),
        ),
      )
    : h("p", { class: "muted" }, "No causal edges around this entity yet (they are proposed by outcome.explained events).");
  return h("div", {}, root, list, h("p", { class: "muted" }, "Causal edges are proposals (non-authoritative) backed by cited evidence."));
}

async function renderQueue(target, session) {
  let status;
  try {
    status = await api(sessionPath(session, "/consolidation"));
  } catch (error) {
    clear(target, h("h2", {}, "Consolidation review queue"), errorBox(error));
    return;
  }
  const counts = ["pending", "accepted", "rejected", "deferred", "conflicted", "stale"]
    .filter((name) => typeof status[name] === "number")
    .map((name) => `${name} ${status[name]}`)
    .join(" · ");
  const rows = (status.candidates || []).map((candidate) => candidateRow(target, session, candidate));
  clear(
    target,
    h("h2", {}, "Consolidation review queue"),
    h("p", { class: "muted" }, counts),
    rows.length
      ? table(["Candidate", "Summary", "Sources", "Status", "Review"], rows, { class: "candidates" })
      : h("p", { class: "muted" }, "No candidates yet (propose them with `zaxy memory consolidation propose-from-log`)."),
  );
}

function candidateRow(target, session, candidate) {
  const rationale = h("input", { name: "rationale", placeholder: "rationale (required)", "data-testid": "review-rationale" });
  const message = h("div");
  const decide = async (decision) => {
    try {
      const result = await api(sessionPath(session, "/consolidation/review"), {
        method: "POST",
        body: { candidate_id: candidate.candidate_id, decision, rationale: rationale.value },
      });
      await renderQueue(target, session);
      target.prepend(h("p", { class: "ok", "data-testid": "review-done" }, `${decision}: recorded as `, citeLink(result.citation)));
    } catch (error) {
      clear(message, errorBox(error));
    }
  };
  const open = ["pending", "deferred"].includes(candidate.review_status) || candidate.review_status === null;
  return h(
    "tr",
    { "data-testid": "candidate-row", "data-candidate": candidate.candidate_id },
    h("td", {}, h("strong", {}, candidate.title), h("div", { class: "muted" }, `${candidate.candidate_type} · confidence ${candidate.confidence}`)),
    h("td", {}, candidate.summary),
    h("td", {}, candidate.source_events.map((citation, index) => [citeLink(citation, `source ${index + 1}`), " "])),
    h(
      "td",
      {},
      badge(candidate.review_status || "pending", candidate.review_status === "accepted" ? "ok" : candidate.review_status === "rejected" ? "bad" : ""),
      candidate.stale ? badge("stale", "warn") : null,
      candidate.review_citation ? h("div", {}, citeLink(candidate.review_citation, "review")) : null,
    ),
    h(
      "td",
      {},
      open
        ? h(
            "div",
            { class: "review" },
            rationale,
            h("button", { type: "button", onclick: () => decide("accepted"), "data-testid": "accept" }, "Accept"),
            h("button", { type: "button", onclick: () => decide("rejected"), "data-testid": "reject" }, "Reject"),
            h("button", { type: "button", onclick: () => decide("deferred"), "data-testid": "defer" }, "Defer"),
            message,
          )
        : h("span", { class: "muted" }, candidate.rationale || ""),
    ),
  );
}

function genericItems(value) {
  const items = Array.isArray(value) ? value : Array.isArray(value?.items) ? value.items : Array.isArray(value?.events) ? value.events : null;
  if (!items) return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
  if (!items.length) return h("p", { class: "muted" }, "none");
  return h(
    "ul",
    {},
    items.map((item) =>
      h(
        "li",
        {},
        item.citation ? citeLink(item.citation, item.type || "event") : null,
        " ",
        item.payload ? JSON.stringify(item.payload) : JSON.stringify(item),
      ),
    ),
  );
}

async function renderUncertainty(target, session) {
  try {
    const data = await api(sessionPath(session, "/uncertainty"));
    clear(
      target,
      h("h2", {}, "Known unknowns"),
      data.known_unknowns === null
        ? h("p", { class: "muted" }, "This version of zaxy does not record known unknowns yet.")
        : genericItems(data.known_unknowns),
      h("h2", {}, "Belief proposals"),
      h("p", { class: "muted" }, "Proposals stay pending and non-authoritative until reviewed."),
      genericItems(data.belief_proposals),
    );
  } catch (error) {
    clear(target, h("h2", {}, "Known unknowns and belief proposals"), errorBox(error));
  }
}
