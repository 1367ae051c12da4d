// What the side panels (fed by hub_sessions or hub_calls) share: a folding section with a count, a Refresh button,
// and a list; and a call of one of the hub's own tools whose tool error is thrown with its text.
import type { CallToolResult } from "@modelcontextprotocol/client";
import { BOOKKEEPING_META_KEY } from "../../../servers/lib/session-events.js";
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";

/**
 * A hub tool's structuredContent; its tool error (isError) thrown with the words the hub gave. A
 * `bookkeeping` call (the panels reading hub_sessions and hub_calls) says so in its _meta, so the
 * hub counts it instead of writing an audit line a person reading the trail must scroll past.
 */
export async function callHubTool(
  connection: Connection,
  name: string,
  args: Record<string, unknown>,
  { bookkeeping = false } = {},
): Promise<Record<string, unknown>> {
  const params = { name, arguments: args, ...(bookkeeping ? { _meta: { [BOOKKEEPING_META_KEY]: true } } : {}) };
  const result = (await connection.client.request({ method: "tools/call", params })) as CallToolResult;
  if (result.isError) throw new Error(result.content.map((c) => (c.type === "text" ? c.text : "")).join(" "));
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

export interface TenantPanel {
  element: HTMLDetailsElement;
  list: HTMLUListElement;
  /** Shows how many items there are; a panel that turns empty folds to its title line, one that fills unfolds. */
  counted(n: number): void;
  /** The list says why it could not be filled. */
  failed(err: unknown): void;
  /** Asks the hub tool and shows its answer, or says why not; nothing before the page is connected. */
  fill(connection: Connection | undefined, tool: string, args: Record<string, unknown>, show: (data: Record<string, unknown>) => void): Promise<void>;
}

/** `load`, run once at a time: a refresh asked for while one runs runs once after it. */
export function coalesced(load: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const refresh = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = load().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void refresh();
      }
    });
    return running;
  };
  return refresh;
}

/** `kind` names its classes and its Refresh action (clients-panel, refresh-clients); `source` the hub tool that fills it, and whose items it shows. */
export function tenantPanel(kind: string, title: string, refresh: () => void, source = { tool: "hub_sessions", scope: "your tenant's only" }): TenantPanel {
  const list = h("ul", { class: `side-list ${kind}-list` });
  const count = h("span", { class: "muted" }, "");
  const button = h(
    "button",
    { type: "button", class: "ghost small", "data-action": `refresh-${kind}`, title: `Ask the hub again (${source.tool})` },
    "Refresh",
  );
  // in the summary line, a click on it would also fold the panel
  button.addEventListener("click", (event) => (event.preventDefault(), refresh()));
  const element = h(
    "details",
    { class: `side-panel ${kind}-panel`, open: true },
    h("summary", { class: "side-summary" }, h("span", { class: "picker-label" }, title), count, button),
    h("div", { class: "muted small-print side-source" }, `from ${source.tool}: ${source.scope}`),
    list,
  );
  const counted = (n: number) => {
    count.textContent = ` ${n}`;
    const empty = String(n === 0);
    // folded when it turns empty, so the tool list stays in sight; unfolded by hand it says why it is empty
    if (element.dataset.empty !== empty) element.open = n > 0;
    element.dataset.empty = empty;
  };
  const failed = (err: unknown) => {
    element.dataset.state = "error";
    replace(list, h("li", { class: "muted" }, `Cannot list them: ${(err as Error).message}`));
  };
  const fill = async (connection: Connection | undefined, tool: string, args: Record<string, unknown>, show: (data: Record<string, unknown>) => void) => {
    if (!connection) return;
    element.dataset.state = "loading";
    try {
      show(await callHubTool(connection, tool, args, { bookkeeping: true }));
      element.dataset.state = "ok";
    } catch (err) {
      failed(err);
    }
  };
  return { element, list, counted, failed, fill };
}
