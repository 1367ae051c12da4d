// The page's welcome: what to do first, true to the session's selection, and the hub's servers at a glance.
import { selectionQuery, selectionWords } from "./catalog-picker.js";
import type { Tool } from "@modelcontextprotocol/client";
import type { HubStatus, ServerStatus } from "./connection.js";
import { formatDuration, h } from "./dom.js";
import { toolCounts } from "./session-servers.js";

/** The page's title, true to the session's selection (a page opened with ?servers=file tries file's tools). */
function welcomeHeading(): string {
  const { what, search } = selectionWords();
  return search ? `Find and try ${what}` : `Try ${what}`;
}

/** One server's row, and under it a row with why it is not ready when the hub knows (lastError). */
function serverRows(s: ServerStatus, shownTools: number | undefined): HTMLElement[] {
  const tools = shownTools === undefined || shownTools === s.tools ? String(s.tools) : `${shownTools} of ${s.tools}`;
  const row = h(
    "tr",
    { "data-server": s.name },
    h("td", null, h("strong", null, s.name)),
    h("td", { class: "col-prefix" }, h("code", null, s.prefix ? `${s.prefix}_*` : "(none)")),
    h("td", null, h("span", { class: `state state-${s.state}`, title: s.lastError ?? "" }, s.state)),
    h("td", { class: "num" }, s.pid ? `pid ${s.pid}` : s.transport === "http" ? "remote" : "—"),
    h("td", { class: "num col-restarts" }, String(s.restarts)),
    h("td", { class: "num", title: shownTools === undefined ? "" : "this session's tools of the server's" }, tools),
  );
  if (!s.lastError) return [row];
  return [row, h("tr", { class: "server-why", "data-server": s.name }, h("td", { colspan: 6 }, h("span", { class: "why-label" }, "why: "), s.lastError))];
}

/**
 * @param servers the session's servers (./session-servers.ts)
 * @param tools the session's tools, counted per server where the selection leaves a server fewer (search mode counts none: they are found)
 */
export function welcome(status: HubStatus | undefined, servers: ServerStatus[], tools: Tool[]): HTMLElement {
  const search = new URLSearchParams(selectionQuery()).get("catalog") === "search";
  const counts = selectionQuery() && !search ? toolCounts(servers, tools) : undefined;
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
    h(
      "p",
      { class: "muted" },
      "This page is an ordinary MCP client of the hub's /mcp endpoint; the log shows every message of its connection (the page's own bookkeeping when asked).",
    ),
    search
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
              servers.flatMap((s) => serverRows(s, counts ? (counts.get(s.name) ?? 0) : undefined)),
            ),
          ),
        )
      : null,
    status && servers.length < status.servers.length
      ? h(
          "p",
          { class: "muted session-servers" },
          `This session has ${servers.length} of the hub's ${status.servers.length} servers (the Catalog picker at the top left chooses them).`,
        )
      : null,
    status ? h("p", { class: "muted" }, `Hub ${status.name} ${status.version}, up ${formatDuration(status.uptimeSeconds * 1000)}.`) : null,
  );
}
