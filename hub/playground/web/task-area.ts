// A tool panel's part of the tasks extension (2026-07-28): the "Run as a task" control, offered as
// the tool's task support allows (the hub's _meta["agentbox/taskSupport"]: a 2026 listing has no
// execution.taskSupport), and a note saying why where it does not; and the area
// showing the task a call became: its id, its status as the hub reports it to the end (cancelled,
// failed, completed, also after the call's outcome is on screen), and its questions.
import type { Tool } from "@modelcontextprotocol/client";
import { TASK_SUPPORT_META_KEY } from "../../../servers/lib/session-events.js";
import { h, replace } from "./dom.js";
import type { InputRequest, TaskState } from "./task-calls.js";
import { taskQuestions } from "./task-questions.js";

type TaskSupport = "optional" | "required" | "forbidden" | undefined;

function supportOf(tool: Tool): TaskSupport {
  const support = (tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport ?? tool._meta?.[TASK_SUPPORT_META_KEY];
  return support === "optional" || support === "required" || support === "forbidden" ? support : undefined;
}

export class TaskArea {
  readonly element = h("div", { class: "task-area", hidden: true });
  /** What the panel's actions row shows of tasks: the checkbox, or a note why there is none (undefined on a 2025 connection). */
  readonly control: HTMLElement | undefined;
  private readonly box = h("input", { type: "checkbox", name: "as-task", "data-action": "as-task" });
  /** The task the running call became. */
  private current?: TaskState;
  /** The panel's latest task: its status is followed after its call ended (a Cancel's tasks/cancel lands after the outcome). */
  private latest?: string;

  constructor(tool: Tool, modern: boolean) {
    if (!modern) return;
    const support = supportOf(tool);
    if (support === "optional") {
      this.control = h(
        "label",
        { class: "as-task", title: "Declare the tasks extension: the call runs as a task (polled; no live output)" },
        this.box,
        " Run as a task",
      );
    } else if (support === "required") {
      this.box.checked = true;
      this.box.disabled = true;
      this.control = h(
        "label",
        { class: "as-task", title: `${tool.name} runs only as a task (its execution.taskSupport is "required")` },
        this.box,
        " Runs as a task",
      );
    } else {
      // the hub runs a call of a tool that did not declare it may be a task the usual way: a tick would do nothing
      const why =
        support === "forbidden"
          ? `${tool.name} may not run as a task (its execution.taskSupport is "forbidden")`
          : `${tool.name} does not declare it can run as a task (no execution.taskSupport), so its calls run the usual way`;
      this.control = h("span", { class: "as-task-absent muted", "data-task-support": support ?? "none", title: why }, "Plain call only");
    }
  }

  /** Whether this tool's calls declare the tasks extension. */
  get runsAsTask(): boolean {
    return this.control !== undefined && this.box.checked;
  }

  /** The task the running call became, if it became one. */
  get running(): TaskState | undefined {
    return this.current;
  }

  /** A call starts: the last call's task leaves the screen. */
  begin(): void {
    this.current = this.latest = undefined;
    this.element.hidden = true;
    replace(this.element);
  }

  /** A call ended: its task's questions are moot; its status stays on screen and keeps following the hub. */
  end(): void {
    this.current = undefined;
    this.element.querySelector(".task-questions")?.remove();
  }

  /** A task changed status: the running call's, or the panel's latest one's after its call ended. */
  onTask(task: TaskState, callRunning: boolean): void {
    const ours = callRunning ? !this.current || this.current.taskId === task.taskId : task.taskId === this.latest;
    if (!ours) return;
    const first = !this.latest;
    if (callRunning) this.current = task;
    this.latest = task.taskId;
    this.element.hidden = false;
    this.element.dataset.status = task.status;
    const line = h("p", { class: "task-line" }, "Task ", h("code", null, task.taskId), " · ", h("span", { class: "task-status" }, task.status));
    if (first || !this.element.firstChild) replace(this.element, line);
    else this.element.replaceChild(line, this.element.firstChild);
    if (task.status !== "input_required") this.element.querySelector(".task-questions[data-state='asking']")?.remove();
  }

  /** The running call's task waits for input: its questions, answered with tasks/update. */
  onInput(requests: Record<string, InputRequest>, answer: (responses: Record<string, unknown>) => Promise<void>): void {
    this.element.querySelector(".task-questions")?.remove();
    this.element.append(taskQuestions(requests, answer));
  }
}
