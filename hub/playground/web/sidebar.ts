// The left column's server cards: each server of the session with its state (and, when it is not
// ready, why), its process, and its tools as buttons; the hub's own tools under "hub".
import type { Tool } from "@modelcontextprotocol/client";
import type { ServerStatus } from "./connection.js";
import { h } from "./dom.js";
import { serverOf } from "./session-servers.js";

export interface SidebarInput {
  /** The session's servers (./session-servers.ts). */
  servers: ServerStatus[];
  tools: Tool[];
  /** The tool filter's text, lower case. */
  query: string;
  selected: string | undefined;
  onSelect(tool: string): void;
}

/** A server's one-line reason for not being ready, as the hub reports it (lastError). */
export function serverProblem(server: ServerStatus | undefined): HTMLElement | null {
  if (!server?.lastError) return null;
  return h("div", { class: "server-error", title: server.lastError }, server.lastError);
}

export function serverCards({ servers, tools, query, selected, onSelect }: SidebarInput): HTMLElement[] {
  const groups = new Map<string, Tool[]>(servers.map((s) => [s.name, []]));
  for (const tool of tools) {
    const owner = serverOf(tool.name, servers);
    if (!groups.has(owner)) groups.set(owner, []);
    groups.get(owner)!.push(tool);
  }
  const cards = [...groups].map(([name, list]) => {
    const server = servers.find((s) => s.name === name);
    const shown = list.filter((t) => !query || t.name.toLowerCase().includes(query) || (t.description ?? "").toLowerCase().includes(query));
    // a filter hides a server none of whose tools match; so does search mode one whose tools are yet to be found,
    // unless the server has a problem to show
    if (query && shown.length === 0) return null;
    if (list.length === 0 && server && server.tools > 0 && !server.lastError) return null;
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
        h("span", { class: `state state-${server?.state ?? "ready"}`, title: server?.lastError ?? "" }, server?.state ?? "built-in"),
      ),
      h("div", { class: "server-meta muted" }, meta),
      serverProblem(server),
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
                onclick: () => onSelect(t.name),
              },
              h("code", null, t.name),
            ),
          ),
        ),
      ),
    );
  });
  return cards.filter((c): c is HTMLElement => c !== null);
}
