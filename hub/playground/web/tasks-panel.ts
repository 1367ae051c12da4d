// The tenant's tasks (tool calls run as tasks), as hub_sessions lists them: the page's own and those
// of every other client of its tenant, never another tenant's, each with its tool and status, and a
// Cancel for one still running (hub_cancel_task, which a 2025 connection can send too).
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";

/** hub_sessions' entry for one task (hub/sessions/task-list.ts). */
interface TaskEntry {
  id: string;
  tool: string;
  status: string;
  createdAt: string;
  lastUpdatedAt: string;
  waitsForInput?: number;
}

const SHOWN = 50;
const ENDED = new Set(["completed", "failed", "cancelled"]);

const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join(" ");

export class TasksPanel {
  readonly element: HTMLDetailsElement;
  private readonly list = h("ul", { class: "tasks-list" });
  private readonly summaryCount = h("span", { class: "muted" }, "");
  private refreshing?: Promise<void>;
  private again = false;

  constructor(private readonly connection: () => Connection | undefined) {
    const refresh = h("button", { type: "button", class: "ghost small", "data-action": "refresh-tasks", title: "Ask the hub again (hub_sessions)" }, "Refresh");
    refresh.addEventListener("click", () => void this.refresh());
    this.element = h(
      "details",
      { class: "tasks-panel", open: true },
      h("summary", { class: "clients-summary" }, h("span", { class: "picker-label" }, "Tasks of this tenant"), this.summaryCount),
      h("div", { class: "clients-actions" }, h("span", { class: "muted small-print" }, "from hub_sessions: your tenant's only"), refresh),
      this.list,
    );
  }

  /** Asks hub_sessions again; a refresh asked for while one runs runs once after it. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = this.load().finally(() => {
      this.refreshing = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const connection = this.connection();
    if (!connection) return;
    this.element.dataset.state = "loading";
    try {
      const result = (await connection.client.request({
        method: "tools/call",
        params: { name: "hub_sessions", arguments: { limit: SHOWN } },
      })) as CallToolResult;
      if (result.isError) throw new Error(textOf(result));
      const data = result.structuredContent as { tenantTasks?: TaskEntry[]; tasksTotal?: number };
      this.show(data.tenantTasks ?? [], data.tasksTotal ?? 0);
    } catch (err) {
      this.element.dataset.state = "error";
      replace(this.list, h("li", { class: "muted" }, `Cannot list them: ${(err as Error).message}`));
    }
  }

  private async cancel(task: TaskEntry, button: HTMLButtonElement): Promise<void> {
    const connection = this.connection();
    if (!connection) return;
    button.disabled = true;
    try {
      const result = (await connection.client.request({
        method: "tools/call",
        params: { name: "hub_cancel_task", arguments: { taskId: task.id } },
      })) as CallToolResult;
      if (result.isError) throw new Error(textOf(result));
    } catch (err) {
      button.disabled = false;
      button.title = (err as Error).message;
    }
    await this.refresh();
  }

  private show(tasks: TaskEntry[], total: number): void {
    this.element.dataset.state = "ok";
    this.summaryCount.textContent = ` ${total}`;
    // newest first: the one just started is what a person looks for
    const rows = [...tasks].reverse().map((task) => {
      const cancel = ENDED.has(task.status)
        ? null
        : h("button", { type: "button", class: "ghost small danger", "data-action": "cancel-task", title: "hub_cancel_task" }, "Cancel");
      cancel?.addEventListener("click", () => void this.cancel(task, cancel));
      return h(
        "li",
        { class: "task-entry", "data-task": task.id, "data-status": task.status, "data-tool": task.tool },
        h("span", { class: `badge task-status status-${task.status}` }, task.waitsForInput ? `${task.status} (${task.waitsForInput})` : task.status),
        h("code", { class: "task-tool" }, task.tool),
        h("span", { class: "muted task-id", title: `started ${task.createdAt}, updated ${task.lastUpdatedAt}` }, task.id.slice(0, 8)),
        cancel,
      );
    });
    replace(
      this.list,
      rows.length ? rows : h("li", { class: "muted" }, "No tasks."),
      total > tasks.length ? h("li", { class: "muted" }, `and ${total - tasks.length} more`) : null,
    );
  }
}
