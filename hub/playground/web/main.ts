// The playground page: servers and their tools on the left, the chosen tool in the middle, the
// session's live log on the right. Connects to the hub's own /mcp like any other MCP client.
import type { CallToolResult, Client, Tool } from "@modelcontextprotocol/client";
import { config as zodConfig } from "zod";
import { CatalogPicker, selectionQuery } from "./catalog-picker.js";
import { ClientsPanel } from "./clients-panel.js";
import { apiKey, connect, fetchStatus, modeOf, Unauthorized, type Connection, type HubStatus, type ServerStatus } from "./connection.js";
import { h, replace } from "./dom.js";
import { askForKey } from "./key-dialog.js";
import { welcome } from "./welcome.js";
import { LogPanel } from "./log-panel.js";
import { protocolChoice, protocolBadge } from "./protocol-choice.js";
import { ToolPanel } from "./tool-panel.js";
import { TasksPanel } from "./tasks-panel.js";
import { PreviewsPanel } from "./previews-panel.js";
import { RecordingsPanel } from "./recordings-panel.js";
import { LivePanel } from "./live-panel.js";
import { CallsPanel } from "./calls-panel.js";
import { sessionServers } from "./session-servers.js";
import { serverCards } from "./sidebar.js";

const STATUS_EVERY_MS = 5000;

// zod would probe for eval (refused by the page's CSP) before its first parse; skip the probe
zodConfig({ jitless: true });

const log = new LogPanel();
const sidebar = h("nav", { class: "sidebar", "aria-label": "Servers and tools" });
const main = h("main", { class: "main" });
const hubInfo = h("div", { class: "hub-info" });
const pill = h("span", { class: "pill", "data-state": "connecting" }, "connecting…");
const picker = new CatalogPicker();
const clients = new ClientsPanel(() => connection);
const tasks = new TasksPanel(() => connection);
const previews = new PreviewsPanel(() => connection);
const recordings = new RecordingsPanel(() => connection);
const live = new LivePanel(
  () => connection,
  (name) => tools.some((t) => t.name === name),
);
const calls = new CallsPanel(() => connection);
const protocol = h("span", { class: "protocol-slot" });
const toolFilter = h("input", { type: "search", placeholder: "Filter tools", class: "tool-filter", "aria-label": "Filter tools" });

let connection: Connection | undefined;
let status: HubStatus | undefined;
let tools: Tool[] = [];
/** The hub's tools/list as last fetched. */
let listed: Tool[] = [];
/** Tools hub_find_tools found on a 2026 connection (see keepFound). */
const found = new Map<string, Tool>();
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
      protocol,
      protocolChoice(),
      forget,
      pill,
    ),
    h(
      "div",
      { class: "layout" },
      h(
        "div",
        { class: "sidebar-wrap" },
        picker.element,
        clients.element,
        tasks.element,
        previews.element,
        recordings.element,
        live.element,
        calls.element,
        h("div", { class: "sidebar-tools" }, toolFilter),
        sidebar,
      ),
      main,
      log.element,
    ),
  );
}

function setPill(state: "connecting" | "connected" | "error", text: string): void {
  pill.dataset.state = state;
  pill.textContent = text;
}

/** The session's servers (not every server of the tenant: the selection may leave some out). */
function mine(): ServerStatus[] {
  return sessionServers(status?.servers ?? [], tools);
}

function renderHubInfo(): void {
  if (!status) return;
  const servers = mine();
  const all = status.servers.length;
  replace(
    hubInfo,
    h("span", null, `v${status.version}`),
    h(
      "span",
      { class: "hub-servers", title: servers.length < all ? `This session has ${servers.map((s) => s.name).join(", ")} of the hub's ${all} servers` : "" },
      servers.length < all ? `${servers.length} of ${all} servers` : `${all} server${all === 1 ? "" : "s"}`,
    ),
    h("span", { class: "hub-tools" }, `${tools.length} tools`),
  );
}

function renderSidebar(): void {
  const query = toolFilter.value.trim().toLowerCase();
  const cards = serverCards({ servers: mine(), tools, query, selected, onSelect: select });
  replace(sidebar, cards.length ? cards : h("p", { class: "muted pad" }, query ? "No tool matches the filter." : "No servers."));
  renderHubInfo();
}

function select(name: string | undefined): void {
  selected = name;
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    replace(main, welcome(status, mine(), tools));
  } else {
    let panel = panels.get(tool.name);
    if (!panel || panel.tool !== tool) {
      // a call may start its server (lazy start) or crash it: the sidebar shows that with the outcome
      panel = new ToolPanel(
        tool,
        () => connection!,
        async (result) => {
          keepFound(tool, result);
          void tasks.refresh();
          void previews.refresh();
          // only a browser or terminal call can start or end a recording (and each listing is an audit line)
          if (/^(browser|terminal)_/.test(tool.name)) void recordings.refresh();
          void calls.refresh();
          live.afterCall(tool.name);
          await refreshStatus();
        },
        (args, result) => live.watchButton(tool.name, args, result),
      );
      panels.set(tool.name, panel);
    }
    replace(main, panel.element);
    history.replaceState(null, "", `#${encodeURIComponent(tool.name)}`);
  }
  renderSidebar();
}

async function listTools(client: Client): Promise<void> {
  // the SDK walks every page of the list
  listed = (await client.listTools()).tools;
  showTools();
}

/** The hub's list and what the page keeps found beside it, keeping the panels (and their inputs) of tools whose definition did not change. */
function showTools(): void {
  const all = [...listed, ...[...found.values()].filter((f) => !listed.some((t) => t.name === f.name))];
  for (const tool of all) {
    const old = tools.find((t) => t.name === tool.name);
    if (old && JSON.stringify(old) === JSON.stringify(tool)) all[all.indexOf(tool)] = old;
  }
  tools = all.sort((a, b) => a.name.localeCompare(b.name));
  // the card counts what the list shows: in 2026 search mode, what hub_find_tools found besides the hub's list
  picker.showSize(tools, tools.length - listed.length);
  select(tools.some((t) => t.name === selected) ? selected : undefined);
}

/**
 * A 2026-07-28 connection has no session whose list hub_find_tools could grow (the hub says the
 * tools are "callable by name now"): the page keeps what it found, so they can be tried here too.
 */
function keepFound(tool: Tool, result: CallToolResult | undefined): void {
  if (tool.name !== "hub_find_tools" || connection?.era !== "modern" || !result || result.isError) return;
  const matches = (result.structuredContent as { matches?: Array<{ name: string; description: string; inputSchema: Tool["inputSchema"] }> } | undefined)
    ?.matches;
  for (const m of matches ?? []) found.set(m.name, { name: m.name, description: m.description, inputSchema: m.inputSchema });
  if (matches?.length) showTools();
}

/** Fetch the catalog again (the hub said it changed, or the page connected). */
function relist(): Promise<void> {
  if (!connection) return Promise.resolve();
  return listTools(connection.client).catch((err: Error) => log.note(`tools/list failed: ${err.message}`, "error"));
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
        {
          tap: (direction, message) => log.add(direction, message),
          note: (text) => log.note(text),
          onError: (error) => log.note(`transport: ${error.message}`, "error"),
          onToolsChanged: () => void relist(),
          // a panel runs one call at a time, and there is one panel per tool: the tool names the panel
          tasks: {
            onTask: (task) => {
              panels.get(task.tool)?.onTask(task);
              void tasks.refresh();
              void calls.refresh();
            },
            onInput: (task, requests, answer) => panels.get(task.tool)?.onInput(requests, answer),
          },
          runsAsTask: (tool) => panels.get(tool)?.runsAsTask ?? false,
        },
        selectionQuery(),
        modeOf(),
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
  const { sessionId, protocolVersion, era } = connection;
  log.note(
    `Connected with MCP ${protocolVersion} (${era === "modern" ? "no session: every request carries its envelope" : `session ${sessionId ?? "(none)"}`})`,
  );
  replace(protocol, protocolBadge(connection));
  await relist();
  // "connected" once the catalog is on screen, so what the pill promises is there
  setPill("connected", "connected");
  void clients.refresh();
  void tasks.refresh();
  void previews.refresh();
  void recordings.refresh();
  void calls.refresh();
  const fromHash = decodeURIComponent(location.hash.slice(1));
  if (fromHash) select(fromHash);
  setInterval(() => void refreshStatus(), STATUS_EVERY_MS);
}

layout();
replace(main, welcome(status, [], []));
void start();
