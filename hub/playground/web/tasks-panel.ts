// The tenant's tasks (tool calls run as tasks), as hub_sessions lists them: the page's own and those
// of every other client of its tenant, never another tenant's, each with its tool and status, and a
// Cancel for one still running (hub_cancel_task, which a 2025 connection can send too). While it
// lists a task still running it asks again, less often the longer nothing changes, so a status
// shown is the task's real one, whichever client cancelled or ended it.
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";
import { callHubTool, coalesced, tenantPanel } from "./tenant-panel.js";

/** hub_sessions' entry for one task (hub/tools/task-list.ts). */
interface TaskEntry {
  id: string;
  tool: string;
  status: string;
  createdAt: string;
  lastUpdatedAt: string;
  statusMessage?: string;
  waitsForInput?: number;
}

const SHOWN = 50;
const ENDED = new Set(["completed", "failed", "cancelled"]);
/** The first look again at a running task, and the longest wait between two while nothing changes. */
const WATCH_FIRST_MS = 1000;
const WATCH_MAX_MS = 15_000;

export class TasksPanel {
  readonly element: HTMLDetailsElement;
  private readonly panel = tenantPanel("tasks", "Tasks of this tenant", () => void this.refresh());
  /** Asks hub_sessions again; a refresh asked for while one runs runs once after it. */
  readonly refresh = coalesced(() => this.load());
  private watch?: ReturnType<typeof setTimeout>;
  private watchMs = WATCH_FIRST_MS;
  /** The statuses last shown, to tell a change (which makes the next look sooner) from none. */
  private shown = "";

  constructor(private readonly connection: () => Connection | undefined) {
    this.element = this.panel.element;
  }

  private load(): Promise<void> {
    return this.panel.fill(this.connection(), "hub_sessions", { limit: SHOWN }, (data) => {
      const { tenantTasks, tasksTotal } = data as { tenantTasks?: TaskEntry[]; tasksTotal?: number };
      this.show(tenantTasks ?? [], tasksTotal ?? 0);
    });
  }

  private async cancel(task: TaskEntry, button: HTMLButtonElement): Promise<void> {
    const connection = this.connection();
    if (!connection) return;
    button.disabled = true;
    try {
      await callHubTool(connection, "hub_cancel_task", { taskId: task.id });
    } catch (err) {
      button.disabled = false;
      button.title = (err as Error).message;
    }
    await this.refresh();
  }

  /** Looks again later while a listed task runs: soon after a change, then less and less often. */
  private watchRunning(tasks: TaskEntry[]): void {
    clearTimeout(this.watch);
    const shown = tasks.map((t) => `${t.id}:${t.status}`).join();
    this.watchMs = shown !== this.shown ? WATCH_FIRST_MS : Math.min(WATCH_MAX_MS, this.watchMs * 2);
    this.shown = shown;
    if (tasks.some((t) => !ENDED.has(t.status))) this.watch = setTimeout(() => void this.refresh(), this.watchMs);
  }

  private show(tasks: TaskEntry[], total: number): void {
    this.panel.counted(total);
    this.watchRunning(tasks);
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
        // an id starts with its replica's and process's parts, shared by every task there: its own uuid tells tasks apart
        h(
          "span",
          { class: "muted task-id", title: `${task.id}: started ${task.createdAt}, updated ${task.lastUpdatedAt}` },
          task.id.split(".").at(-1)!.slice(0, 8),
        ),
        task.statusMessage ? h("span", { class: "muted task-says" }, task.statusMessage) : null,
        cancel,
      );
    });
    replace(
      this.panel.list,
      rows.length ? rows : h("li", { class: "muted" }, "No tasks."),
      total > tasks.length ? h("li", { class: "muted" }, `and ${total - tasks.length} more`) : null,
    );
  }
}
