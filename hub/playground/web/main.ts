// The playground page: servers and their tools on the left, the chosen tool in the middle, the
// session's live log on the right. Connects to the hub's own /mcp like any other MCP client.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { config as zodConfig } from "zod";
import { CatalogPicker, selectionQuery, selectionWords } from "./catalog-picker.js";
import { apiKey, connect, fetchStatus, Unauthorized, type Connection, type HubStatus, type ServerStatus } from "./connection.js";
import { formatDuration, h, replace } from "./dom.js";
import { askForKey } from "./key-dialog.js";
import { LogPanel } from "./log-panel.js";
import { ToolPanel } from "./tool-panel.js";

const STATUS_EVERY_MS = 5000;

// zod would probe for eval (refused by the page's CSP) before its first parse; skip the probe
zodConfig({ jitless: true });

const log = new LogPanel();
const sidebar = h("nav", { class: "sidebar", "aria-label": "Servers and tools" });
const main = h("main", { class: "main" });
const hubInfo = h("div", { class: "hub-info" });
const pill = h("span", { class: "pill", "data-state": "connecting" }, "connecting…");
const picker = new CatalogPicker();
const toolFilter = h("input", { type: "search", placeholder: "Filter tools", class: "tool-filter", "aria-label": "Filter tools" });

let connection: Connection | undefined;
let status: HubStatus | undefined;
let tools: Tool[] = [];
let selected: string | undefined;
const panels = new Map<string, ToolPanel>();

function layout(): void {
  const forget = h(
    "button",
    { type: "button", class: "ghost small", title: "Forget the API key kept in this tab", hidden: !apiKey.get(), id: "forget-key" },
    "Forget key",
  );
  forget.addEventListener("click", () => {
    apiKey.clear();
    location.reload();
  });
  toolFilter.addEventListener("input", renderSidebar);
  document.body.append(
    h(
      "header",
      { class: "topbar" },
      h(
        "div",
        { class: "brand" },
        h("img", { src: "playground/favicon.svg", alt: "", width: 22, height: 22 }),
        h("strong", null, "agentbox"),
        h("span", { class: "muted" }, "playground"),
      ),
      hubInfo,
      h("span", { class: "spacer" }),
      forget,
      pill,
    ),
    h(
      "div",
      { class: "layout" },
      h("div", { class: "sidebar-wrap" }, picker.element, h("div", { class: "sidebar-tools" }, toolFilter), sidebar),
      main,
      log.element,
    ),
  );
}

function setPill(state: "connecting" | "connected" | "error", text: string): void {
  pill.dataset.state = state;
  pill.textContent = text;
}

function serverOf(toolName: string, servers: ServerStatus[]): string {
  // the longest matching prefix wins, so "db" never claims "db_admin_*" of a "db_admin" server
  const match = servers.filter((s) => s.prefix && toolName.startsWith(`${s.prefix}_`)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
  if (match) return match.name;
  const unprefixed = servers.find((s) => !s.prefix);
  if (unprefixed) return unprefixed.name;
  return toolName.startsWith("hub_") ? "hub" : "other";
}

function renderHubInfo(): void {
  if (!status) return;
  replace(
    hubInfo,
    h("span", null, `v${status.version}`),
    h("span", null, `${status.servers.length} server${status.servers.length === 1 ? "" : "s"}`),
    h("span", null, `${tools.length} tools`),
    connection?.sessionId ? h("span", { title: connection.sessionId }, `session ${connection.sessionId.slice(0, 8)}`) : null,
  );
}

function renderSidebar(): void {
  const servers = status?.servers ?? [];
  const groups = new Map<string, Tool[]>(servers.map((s) => [s.name, []]));
  for (const tool of tools) {
    const owner = serverOf(tool.name, servers);
    if (!groups.has(owner)) groups.set(owner, []);
    groups.get(owner)!.push(tool);
  }
  const q = toolFilter.value.trim().toLowerCase();
  const cards = [...groups].map(([name, list]) => {
    const server = servers.find((s) => s.name === name);
    const shown = list.filter((t) => !q || t.name.toLowerCase().includes(q) || (t.description ?? "").toLowerCase().includes(q));
    // a filter, or a catalog that leaves the server out (selection, search mode), hides its card
    if ((q || selectionQuery()) && shown.length === 0) return null;
    const meta = server
      ? [server.pid ? `pid ${server.pid}` : "no process", `${server.restarts} restart${server.restarts === 1 ? "" : "s"}`, `${list.length} tools`].join(" · ")
      : `${list.length} tools, served by the hub`;
    return h(
      "section",
      { class: "server", "data-server": name },
      h(
        "div",
        { class: "server-head" },
        h("span", { class: "server-name" }, name),
        h("span", { class: `state state-${server?.state ?? "ready"}` }, server?.state ?? "built-in"),
      ),
      h("div", { class: "server-meta muted" }, meta),
      server?.lastError ? h("div", { class: "server-error" }, server.lastError) : null,
      h(
        "ul",
        { class: "tool-list" },
        shown.map((t) =>
          h(
            "li",
            null,
            h(
              "button",
              {
                type: "button",
                class: `tool-link${t.name === selected ? " active" : ""}`,
                "data-tool": t.name,
                title: t.description ?? "",
                onclick: () => select(t.name),
              },
              h("code", null, t.name),
            ),
          ),
        ),
      ),
    );
  });
  replace(sidebar, cards.filter(Boolean).length ? cards : h("p", { class: "muted pad" }, q ? "No tool matches the filter." : "No servers."));
  renderHubInfo();
}

/** The page's title, true to the session's selection (a page opened with ?servers=file tries file's tools). */
function welcomeHeading(): string {
  const { what, search } = selectionWords();
  return search ? `Find and try ${what}` : `Try ${what}`;
}

function welcome(): HTMLElement {
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
    h("p", { class: "muted" }, "This page is an ordinary MCP client of the hub's /mcp endpoint; the session log shows every message of its session."),
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

function select(name: string | undefined): void {
  selected = name;
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    replace(main, welcome());
  } else {
    let panel = panels.get(tool.name);
    if (!panel || panel.tool !== tool) {
      // a call may start its server (lazy start) or crash it: the sidebar shows that with the outcome
      panel = new ToolPanel(tool, () => connection!.client, refreshStatus);
      panels.set(tool.name, panel);
    }
    replace(main, panel.element);
    history.replaceState(null, "", `#${encodeURIComponent(tool.name)}`);
  }
  renderSidebar();
}

async function listTools(client: Client): Promise<void> {
  const all: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  picker.showSize(all);
  // keep panels (and their inputs) of tools whose definition did not change
  for (const tool of all) {
    const old = tools.find((t) => t.name === tool.name);
    if (old && JSON.stringify(old) === JSON.stringify(tool)) all[all.indexOf(tool)] = old;
  }
  tools = all.sort((a, b) => a.name.localeCompare(b.name));
  select(tools.some((t) => t.name === selected) ? selected : undefined);
}

/** Poll the hub's status so restarts and crashes show up; re-list tools when a server changed. */
async function refreshStatus(): Promise<void> {
  try {
    const before = status?.servers.map((s) => `${s.name}:${s.state}:${s.tools}`).join();
    status = await fetchStatus();
    const after = status.servers.map((s) => `${s.name}:${s.state}:${s.tools}`).join();
    if (before !== after && connection) await listTools(connection.client);
    else if (selected) renderSidebar();
    else select(undefined); // the welcome page shows the status too
  } catch (err) {
    if (!(err instanceof Unauthorized)) log.note(`status: ${(err as Error).message}`, "error");
  }
}

async function start(): Promise<void> {
  for (;;) {
    try {
      setPill("connecting", "connecting…");
      status = await fetchStatus();
      picker.setServers(status.servers.map((s) => s.name));
      connection = await connect(
        (direction, message) => log.add(direction, message),
        (error) => log.note(`transport: ${error.message}`, "error"),
        selectionQuery(),
      );
      break;
    } catch (err) {
      if (!(err instanceof Unauthorized)) {
        setPill("error", "not connected");
        log.note(`Could not connect: ${(err as Error).message}`, "error");
        // a refused selection (HTTP 400) is fixed with the catalog picker, left open for it
        if (selectionQuery()) picker.element.open = true;
        replace(
          main,
          h(
            "div",
            { class: "welcome", "data-error": "connect" },
            h("h1", null, "Cannot connect to the hub"),
            h("pre", { class: "text" }, (err as Error).message),
          ),
        );
        return;
      }
      // ask for the key once; it stays in this tab's sessionStorage for later reloads
      const hadKey = apiKey.get() !== null;
      apiKey.set(await askForKey(hadKey ? "That API key was not accepted." : undefined));
      document.getElementById("forget-key")?.removeAttribute("hidden");
    }
  }
  log.note(`Connected, session ${connection.sessionId ?? "(stateless)"}`);
  const client = connection.client;
  const relist = () => listTools(client).catch((err: Error) => log.note(`tools/list failed: ${err.message}`, "error"));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void relist());
  await relist();
  // "connected" once the catalog is on screen, so what the pill promises is there
  setPill("connected", "connected");
  const fromHash = decodeURIComponent(location.hash.slice(1));
  if (fromHash) select(fromHash);
  setInterval(() => void refreshStatus(), STATUS_EVERY_MS);
}

layout();
replace(main, welcome());
void start();
