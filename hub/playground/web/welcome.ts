// The page's welcome: what to do first, true to the session's selection, and the hub's servers at a glance.
import { selectionQuery, selectionWords } from "./catalog-picker.js";
import type { HubStatus } from "./connection.js";
import { formatDuration, h } from "./dom.js";

/** The page's title, true to the session's selection (a page opened with ?servers=file tries file's tools). */
function welcomeHeading(): string {
  const { what, search } = selectionWords();
  return search ? `Find and try ${what}` : `Try ${what}`;
}

export function welcome(status: HubStatus | undefined): HTMLElement {
  const servers = status?.servers ?? [];
  return h(
    "div",
    { class: "welcome" },
    h("h1", null, welcomeHeading()),
    h(
      "p",
      null,
      "Pick a tool on the left: its input schema becomes a form. Run it and the result appears as text, rendered Markdown, foldable JSON or pictures. " +
        "Long calls show their progress and can be cancelled.",
    ),
    h("p", { class: "muted" }, "This page is an ordinary MCP client of the hub's /mcp endpoint; the log shows every message of its connection."),
    new URLSearchParams(selectionQuery()).get("catalog") === "search"
      ? h(
          "p",
          { class: "search-hint" },
          "Search mode: the catalog starts with the hub's own tools. Run hub_find_tools with a task in a few words; " +
            "the tools it finds join the list on the left.",
        )
      : null,
    servers.length
      ? h(
          "div",
          { class: "overview-wrap" },
          h(
            "table",
            { class: "overview" },
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                ["Server", "Prefix", "State", "Process", "Restarts", "Tools"].map((t) => h("th", { class: `col-${t.toLowerCase()}` }, t)),
              ),
            ),
            h(
              "tbody",
              null,
              servers.map((s) =>
                h(
                  "tr",
                  null,
                  h("td", null, h("strong", null, s.name)),
                  h("td", { class: "col-prefix" }, h("code", null, s.prefix ? `${s.prefix}_*` : "(none)")),
                  h("td", null, h("span", { class: `state state-${s.state}` }, s.state)),
                  h("td", { class: "num" }, s.pid ? `pid ${s.pid}` : s.transport === "http" ? "remote" : "—"),
                  h("td", { class: "num col-restarts" }, String(s.restarts)),
                  h("td", { class: "num" }, String(s.tools)),
                ),
              ),
            ),
          ),
        )
      : null,
    status ? h("p", { class: "muted" }, `Hub ${status.name} ${status.version}, up ${formatDuration(status.uptimeSeconds * 1000)}.`) : null,
  );
}
