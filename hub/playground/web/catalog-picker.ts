// Choose the session's catalog the way any client would: by the URL it connects with
// (?servers= ?tools= ?catalog=search). The choice lives in the page's own query string, so
// applying it reloads the page into a new session, and a link to the page keeps the choice.
// Shows what the resulting tools/list costs a model: its size in bytes and about as many tokens.
import type { Tool } from "@modelcontextprotocol/client";
import { formatBytes, h, replace } from "./dom.js";

const PARAMS = ["servers", "tools", "catalog"] as const;
/** About how many bytes of JSON make one token for current models' tokenizers. */
const BYTES_PER_TOKEN = 4;

/** The selection parameters of the page's URL, as the query string to connect with ("" for none). */
export function selectionQuery(search: string = location.search): string {
  const from = new URLSearchParams(search);
  const to = new URLSearchParams();
  for (const key of PARAMS) for (const value of from.getAll(key)) if (value) to.append(key, value);
  const query = to.toString();
  return query ? `?${query}` : "";
}

/** In words, which tools the page's URL selects: "every tool of this hub", "the tools of file, terminal"… */
export function selectionWords(search: string = location.search): { what: string; search: boolean } {
  const params = new URLSearchParams(selectionQuery(search));
  const list = (key: string) =>
    params
      .getAll(key)
      .flatMap((v) => v.split(","))
      .filter(Boolean)
      .join(", ");
  const servers = list("servers");
  const tools = list("tools");
  let what = servers ? `the tools of ${servers}` : tools ? "the tools" : "every tool of this hub";
  if (tools) what += ` matching ${tools}`;
  return { what, search: params.get("catalog") === "search" };
}

/** The size of a tools/list result as a client receives it. */
export function catalogBytes(tools: Tool[]): number {
  return new TextEncoder().encode(JSON.stringify({ tools })).length;
}

function pickerChoice(): string {
  const { what, search } = selectionWords();
  const choice = what === "every tool of this hub" ? "all tools" : what.replace(/^the tools of /, "servers ").replace(/^the tools matching /, "tools ");
  return search ? `${choice}, search mode` : choice;
}

export class CatalogPicker {
  readonly element: HTMLDetailsElement;
  private readonly size = h("div", { class: "catalog-size", "data-bytes": "" });
  private readonly serverBoxes = h("div", { class: "catalog-servers" });
  private readonly toolsInput = h("input", {
    type: "text",
    name: "tools",
    placeholder: "e.g. prefix_tool, prefix_*, !hub_metrics",
    "aria-label": "Tools (names or globs)",
  });
  private readonly searchBox = h("input", { type: "checkbox", name: "catalog-search" });

  constructor() {
    const current = new URLSearchParams(location.search);
    this.toolsInput.value = current.getAll("tools").join(",");
    this.searchBox.checked = current.get("catalog") === "search";
    const form = h(
      "form",
      { class: "catalog-form", onsubmit: (e: Event) => (e.preventDefault(), this.apply()) },
      h("div", { class: "catalog-label" }, "Servers"),
      this.serverBoxes,
      h("label", { class: "catalog-label" }, "Tools", this.toolsInput),
      h("label", { class: "catalog-check" }, this.searchBox, " Search mode: start with hub tools and hub_find_tools"),
      h(
        "div",
        { class: "catalog-actions" },
        h("button", { type: "submit", class: "primary small", "data-action": "apply-selection" }, "Connect with this catalog"),
        h("button", { type: "button", class: "ghost small", "data-action": "reset-selection", onclick: () => this.navigate("") }, "All tools"),
      ),
    );
    this.element = h(
      "details",
      { class: "catalog-picker", open: selectionQuery() !== "" },
      // drawn as a control (a box, "Change", a chevron) so it reads as something to open
      h(
        "summary",
        { class: "picker-summary", title: "Choose which servers and tools this page's session gets" },
        h("span", { class: "picker-line" }, h("span", { class: "picker-label" }, "Catalog"), h("span", { class: "picker-change" }, "Change")),
        h("span", { class: "picker-choice" }, pickerChoice()),
        this.size,
      ),
      h("p", { class: "muted small-print" }, "A session's tools are chosen by the URL it connects with; this page connects with:"),
      h("code", { class: "catalog-url" }, `/mcp${selectionQuery()}`),
      form,
    );
  }

  /** Offer the hub's servers, ticked as the page's URL selects them (all when it names none). */
  setServers(names: string[]): void {
    const chosen = new URLSearchParams(location.search)
      .getAll("servers")
      .flatMap((v) => v.split(","))
      .filter(Boolean);
    replace(
      this.serverBoxes,
      names.map((name) =>
        h(
          "label",
          { class: "catalog-check" },
          h("input", { type: "checkbox", name: "server", value: name, checked: !chosen.length || chosen.includes(name) }),
          ` ${name}`,
        ),
      ),
    );
  }

  /**
   * Show the session's tools and their size: its tools/list, and the `found` of them a 2026 page
   * keeps beside it (hub_find_tools returned their definitions, which the model read all the same).
   */
  showSize(tools: Tool[], found = 0): void {
    const bytes = catalogBytes(tools);
    this.size.dataset.bytes = String(bytes);
    this.size.dataset.tools = String(tools.length);
    const count = found ? `${tools.length} tools (${found} found)` : `${tools.length} tools`;
    this.size.textContent = `${count} · ${formatBytes(bytes)} · ~${Math.round(bytes / BYTES_PER_TOKEN).toLocaleString("en")} tokens`;
    this.size.title =
      `The tool definitions are ${bytes} bytes of JSON, which a model reads on every turn (about ${BYTES_PER_TOKEN} bytes a token)` +
      (found ? `; ${found} of them came with hub_find_tools' answer, as a 2026-07-28 session keeps no list to grow` : "");
  }

  private apply(): void {
    const boxes = [...this.serverBoxes.querySelectorAll<HTMLInputElement>("input[name=server]")];
    const ticked = boxes.filter((b) => b.checked).map((b) => b.value);
    const params = new URLSearchParams();
    // every server ticked is no selection at all: new servers added to the hub later stay in
    if (ticked.length < boxes.length) params.set("servers", ticked.join(","));
    const tools = this.toolsInput.value
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    if (tools.length) params.set("tools", tools.join(","));
    if (this.searchBox.checked) params.set("catalog", "search");
    const query = params.toString();
    this.navigate(query ? `?${query}` : "");
  }

  private navigate(query: string): void {
    // keep the chosen tool (the hash) and protocol; a new page is a new session with the new catalog
    const params = new URLSearchParams(query);
    const protocol = new URLSearchParams(location.search).get("protocol");
    if (protocol) params.set("protocol", protocol);
    const search = params.toString();
    location.assign(`${location.pathname}${search ? `?${search.replace(/%2C/gi, ",")}` : ""}${location.hash}`);
  }
}
