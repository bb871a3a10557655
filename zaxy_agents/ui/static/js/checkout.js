// Checkout preview: the exact packet an agent of this session would get for a question, budget and purpose.
import { api, badge, citeLink, clear, errorBox, field, h, sessionPath, state, table } from "./core.js";

const TIERS = { 1: "Tier 1 · stable knowledge", 2: "Tier 2 · session state", 3: "Tier 3 · query evidence" };
const ANSWERABILITY = { answer_from_memory: "ok", refresh_recommended: "warn", ask_user: "bad" };

export async function renderCheckout(target, session) {
  const question = h("textarea", { name: "query", rows: 2, placeholder: "What is the deploy target?", "data-testid": "checkout-query" });
  const budget = h("input", { name: "max_tokens", type: "number", min: 64, max: 200000, value: 2000, "data-testid": "checkout-budget" });
  const purpose = h(
    "select",
    { name: "purpose", "data-testid": "checkout-purpose" },
    (state.me ? state.me.purposes : ["general"]).map((name) => h("option", { value: name, selected: name === "general" }, name)),
  );
  const scope = h("input", { name: "scope", placeholder: "other sessions to recall from (optional, comma-separated)" });
  const result = h("div", { "data-testid": "checkout-result" });
  const form = h(
    "form",
    { class: "card", "data-testid": "checkout-form" },
    field("Question", question),
    h("div", { class: "row" }, field("Budget (tokens)", budget), field("Purpose", purpose), field("Also recall from", scope)),
    h("button", { type: "submit" }, "Preview the packet"),
    h("p", { class: "muted" }, "Runs the same checkout as memory_checkout for this session; nothing is recorded."),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(result, h("p", { class: "muted" }, "Checking out…"));
    const sessions = scope.value.split(",").map((item) => item.trim()).filter(Boolean);
    try {
      const packet = await api(sessionPath(session, "/checkout"), {
        method: "POST",
        body: {
          query: question.value,
          max_tokens: budget.value === "" ? null : Number(budget.value),
          purpose: purpose.value,
          scope: sessions.length ? sessions : null,
        },
      });
      clear(result, packetView(packet));
    } catch (error) {
      clear(result, errorBox(error));
    }
  });
  clear(target, form, result);
}

function packetView(packet) {
  const quality = packet.quality;
  const diagnostics = packet.diagnostics;
  const retention = packet.retention;
  const tiers = new Map();
  for (const fact of packet.current_facts) {
    if (!tiers.has(fact.tier)) tiers.set(fact.tier, []);
    tiers.get(fact.tier).push(fact);
  }
  const elided = Object.entries(diagnostics.elided || {});
  return h(
    "div",
    {},
    h(
      "section",
      { class: "card", "data-testid": "answerability" },
      h("h2", {}, "Answerability ", badge(quality.answerability, ANSWERABILITY[quality.answerability] || ""), ` confidence ${quality.confidence}`),
      h("ul", {}, quality.reasons.map((reason) => h("li", {}, reason))),
      quality.required_action ? h("p", {}, `Next: ${quality.required_action.tool}("${quality.required_action.query}") — ${quality.required_action.reason}`) : null,
      quality.missing_slots.length ? h("p", {}, `Missing: ${quality.missing_slots.join(", ")}`) : null,
      h("p", { class: "muted" }, `Budget: ${diagnostics.budget_used} of ${diagnostics.budget_requested ?? "unbounded"} tokens (${diagnostics.encoding}); purpose ${packet.purpose.name}`),
    ),
    [1, 2, 3].map((tier) =>
      h(
        "section",
        { class: "card", "data-testid": `tier-${tier}` },
        h("h2", {}, TIERS[tier], ` (${(tiers.get(tier) || []).length})`),
        (tiers.get(tier) || []).length
          ? table(
              ["Fact", "Type", "Since", "Citation"],
              tiers.get(tier).map((fact) =>
                h(
                  "tr",
                  {},
                  h("td", {}, h("strong", {}, fact.name), " — ", fact.summary, fact.authority_status ? h("span", { class: "muted" }, ` (${fact.authority_status})`) : null),
                  h("td", {}, fact.entity_type),
                  h("td", {}, fact.valid_from),
                  h("td", {}, citeLink(fact.citation)),
                ),
              ),
            )
          : h("p", { class: "muted" }, "nothing in this tier"),
      ),
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, `Evidence (${packet.evidence.length})`),
      packet.evidence.length
        ? table(
            ["Event", "Text", "Lanes", "Score"],
            packet.evidence.map((item) =>
              h("tr", {}, h("td", {}, citeLink(item.citation, `${item.event_type} #${item.seq}`)), h("td", {}, item.text), h("td", {}, item.lanes.join(", ")), h("td", { class: "num" }, item.score.toFixed(3))),
            ),
          )
        : h("p", { class: "muted" }, "no evidence retrieved"),
    ),
    h(
      "section",
      { class: "card", "data-testid": "elided" },
      h("h2", {}, "Left out, and why"),
      table(
        ["What", "How many"],
        [
          ["elided to fit the budget", retention.elided_by_budget],
          ["superseded versions excluded", retention.superseded_excluded],
          ["invalidated versions excluded", retention.invalidated_excluded],
          ["suppressed by the purpose", retention.suppressed_by_purpose],
          ...elided.map(([key, value]) => [`elided: ${key}`, typeof value === "object" ? JSON.stringify(value) : value]),
        ].map(([label, value]) => h("tr", {}, h("td", {}, label), h("td", { class: "num" }, String(value)))),
      ),
      packet.warnings.length ? h("ul", { class: "warnings" }, packet.warnings.map((warning) => h("li", {}, warning))) : null,
    ),
    h("section", { class: "card" }, h("h2", {}, "The prompt the agent receives"), h("pre", { class: "prompt", "data-testid": "packet-prompt" }, packet.prompt)),
  );
}
