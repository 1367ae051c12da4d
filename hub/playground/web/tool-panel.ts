// One tool: its description and annotations, its arguments as a form, Run and Cancel, live
// progress, and the result. A panel keeps its inputs and result while the user looks elsewhere.
import { SdkHttpError, type CallToolResult, type Progress, type Tool } from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import type { Connection } from "./connection.js";
import { formatDuration, h, replace, type Child } from "./dom.js";
import { renderResult, type OutputCheck } from "./result-view.js";
import { buildForm, type JsonSchema } from "./schema-form.js";
import { StreamedOutput } from "./streamed-output.js";
import { TaskArea } from "./task-area.js";
import type { InputRequest, TaskState } from "./task-calls.js";

// long tools (a build, a crawl) run as long as they keep reporting progress
const CALL_TIMEOUT_MS = 10 * 60_000;
const validator = new CfWorkerJsonSchemaValidator();
const AFTER_CALL_WAIT_MS = 3000;

const ANNOTATIONS: [keyof NonNullable<Tool["annotations"]>, string, string][] = [
  ["readOnlyHint", "read-only", "Does not change its environment"],
  ["destructiveHint", "destructive", "May change or delete things"],
  ["idempotentHint", "idempotent", "Calling again with the same arguments has no further effect"],
  ["openWorldHint", "open world", "Talks to the world outside (network, web pages)"],
];

export class ToolPanel {
  readonly element: HTMLElement;
  private readonly form;
  private readonly runButton = h("button", { type: "submit", class: "primary", "data-action": "run" }, "Run");
  private readonly cancelButton = h("button", { type: "button", class: "secondary danger", "data-action": "cancel", hidden: true }, "Cancel");
  private readonly status = h("div", { class: "call-status", "data-state": "idle" });
  private readonly result = h("div", { class: "result", "aria-live": "polite" });
  /** The task the running call became (2026-07-28, a task-capable tool): its id, status and questions. */
  private readonly task: TaskArea;
  private abort?: AbortController;

  /**
   * @param onCallEnd runs before a call's outcome is shown, so what the call changed (a server it started) shows with it
   * @param resultActions what the page offers beside a result (the Live panel's "Watch live")
   */
  constructor(
    readonly tool: Tool,
    private readonly connection: () => Connection,
    private readonly onCallEnd: (result?: CallToolResult) => Promise<void> = async () => undefined,
    private readonly resultActions: (args: Record<string, unknown>, result: CallToolResult) => Child = () => null,
  ) {
    this.form = buildForm(tool.inputSchema as JsonSchema);
    this.task = new TaskArea(tool, connection().era === "modern");
    const annotations = ANNOTATIONS.filter(([key]) => tool.annotations?.[key] === true).map(([key, label, title]) =>
      h("span", { class: `badge ann-${key}`, title }, label),
    );
    const formEl = h(
      "form",
      { class: "tool-form", novalidate: true },
      h("h3", null, "Arguments"),
      this.form.element,
      h(
        "div",
        { class: "actions" },
        this.runButton,
        this.cancelButton,
        // 2026-07-28 only: the tasks extension is declared per request
        this.task.control,
        this.status,
      ),
      this.task.element,
    );
    formEl.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.run();
    });
    // Ctrl/Cmd+Enter runs from inside a text box
    formEl.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        void this.run();
      }
    });
    this.cancelButton.addEventListener("click", () => this.abort?.abort("Cancelled in the playground"));
    this.element = h(
      "article",
      { class: "tool-panel", id: `tool-${tool.name}`, "data-tool": tool.name },
      h(
        "header",
        { class: "tool-head" },
        h("h2", null, h("code", null, tool.name)),
        tool.title && tool.title !== tool.name ? h("span", { class: "tool-title" }, tool.title) : null,
        h("div", { class: "badges" }, annotations),
      ),
      h("p", { class: "tool-desc" }, tool.description ?? ""),
      formEl,
      this.result,
    );
  }

  /** Whether the person asked to run this tool's calls as tasks. */
  get runsAsTask(): boolean {
    return this.task.runsAsTask;
  }

  /** The running call became a task, or its task changed status (./task-calls.ts), also after the call's outcome. */
  onTask(task: TaskState): void {
    this.task.onTask(task, this.abort !== undefined);
  }

  /** The task waits for input: its questions, answered with tasks/update. */
  onInput(requests: Record<string, InputRequest>, answer: (responses: Record<string, unknown>) => Promise<void>): void {
    if (this.abort) this.task.onInput(requests, answer);
  }

  /** onCallEnd, but never holding back the outcome for long (the hub may be slow to answer GET /). */
  private async afterCall(result?: CallToolResult): Promise<void> {
    await Promise.race([this.onCallEnd(result).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, AFTER_CALL_WAIT_MS))]);
  }

  private setStatus(state: string, ...children: (Node | string)[]): void {
    this.status.dataset.state = state;
    replace(this.status, ...children);
  }

  async run(): Promise<void> {
    if (this.abort) return;
    const args = this.form.read();
    if (!args.ok) {
      this.setStatus("invalid", `Fix ${args.errors.length} field${args.errors.length === 1 ? "" : "s"} first.`);
      return;
    }
    const abort = (this.abort = new AbortController());
    this.task.begin();
    const started = performance.now();
    const bar = h("progress", { class: "progress" });
    const progressText = h("span", { class: "progress-text" }, "Running…");
    const elapsed = h("span", { class: "muted elapsed" }, "");
    this.setStatus("running", bar, progressText, elapsed);
    const tick = setInterval(() => (elapsed.textContent = formatDuration(performance.now() - started)), 200);
    this.runButton.disabled = true;
    this.cancelButton.hidden = false;
    const output = new StreamedOutput();
    this.showResult("running", "Output so far", output.element);
    const onprogress = (p: Progress) => {
      // a task's call hears only the page's own keep-alive (./task-calls.ts): it says nothing
      if (this.task.running && !p.message && !p.total) return;
      if (p.total) {
        bar.max = p.total;
        bar.value = p.progress;
      }
      progressText.textContent = p.message ?? (p.total ? `${p.progress} of ${p.total}` : `${p.progress}`);
      output.add(p);
    };
    try {
      const { client, callMeta } = this.connection();
      // request(), not callTool(): a result that does not match the tool's output schema is shown (and marked), not thrown away
      const params = { name: this.tool.name, arguments: args.value, ...(callMeta ? { _meta: callMeta } : {}) };
      const result = (await client.request(
        { method: "tools/call", params },
        { signal: abort.signal, onprogress, timeout: CALL_TIMEOUT_MS, resetTimeoutOnProgress: true },
      )) as CallToolResult;
      const took = formatDuration(performance.now() - started);
      await this.afterCall(result);
      const actions = this.resultActions(args.value, result);
      this.setOutcome(result.isError ? "error" : "ok", result.isError ? `Tool error · ${took}` : `Done · ${took}`);
      this.showResult(
        result.isError ? "error" : "ok",
        result.isError ? "Tool reported an error" : "Result",
        h("div", null, actions ? h("div", { class: "result-actions" }, actions) : null, output.folded(), renderResult(result, this.checkOutput(result))),
      );
    } catch (err) {
      const took = formatDuration(performance.now() - started);
      await this.afterCall();
      if (abort.signal.aborted) {
        this.setOutcome("cancelled", `Cancelled after ${took}`);
        // what the tool printed before the cancel is often the reason for it: keep it on screen
        this.showResult(
          "cancelled",
          "Cancelled",
          h(
            "div",
            null,
            h(
              "p",
              { class: "muted" },
              this.task.running
                ? `The call was cancelled: task ${this.task.running.taskId} was sent tasks/cancel, which ends it with every process it started.`
                : "The call was cancelled; the hub forwarded the cancellation to the tool.",
            ),
            output.kept(),
          ),
        );
      } else {
        const message = err instanceof Error ? err.message : String(err);
        // 404 on /mcp: the hub restarted or let the session idle out; only a new session helps
        const gone = err instanceof SdkHttpError && err.status === 404 && this.connection().sessionId !== undefined;
        this.setOutcome("failed", `Request failed · ${took}`);
        this.showResult(
          "failed",
          "Request failed",
          h(
            "div",
            null,
            h("pre", { class: "text" }, message),
            output.kept(),
            gone
              ? h(
                  "p",
                  { class: "hint" },
                  "The hub no longer knows this page's session. ",
                  h("a", { href: location.href }, "Reload the page"),
                  " to start a new one.",
                )
              : null,
          ),
        );
      }
    } finally {
      clearInterval(tick);
      this.abort = undefined;
      this.task.end();
      this.runButton.disabled = false;
      this.cancelButton.hidden = true;
      // last, once the form's buttons are as they stay: hiding Cancel can unwrap their row at a
      // narrow width, which moved the result up by a line after it was scrolled to
      if (this.result.dataset.state !== "running") this.revealResult();
    }
  }

  /** The outcome by the Run button, with a jump to the result, which may be far below a long form. */
  private setOutcome(state: string, text: string): void {
    const jump = h("button", { type: "button", class: "ghost small to-result", "data-action": "to-result", title: "Scroll to the result" }, "Result ↓");
    jump.addEventListener("click", () => this.revealResult());
    this.setStatus(state, h("span", { class: "outcome-text" }, text), jump);
  }

  /** Brings the result's head into view when it is out of sight (below a long form, or scrolled away), so the outcome is seen without hunting. */
  private revealResult(): void {
    if (!this.result.isConnected) return; // the person moved on to another tool
    const scroller = this.element.closest(".main") ?? document.scrollingElement;
    if (!scroller) return;
    const view = scroller.getBoundingClientRect();
    const head = this.result.getBoundingClientRect();
    if (head.top >= view.top && head.top + Math.min(head.height, 120) <= view.bottom) return;
    const smooth = !matchMedia("(prefers-reduced-motion: reduce)").matches;
    this.result.scrollIntoView({ block: "start", behavior: smooth ? "smooth" : "auto" });
  }

  private checkOutput(result: CallToolResult): OutputCheck | undefined {
    if (!this.tool.outputSchema || result.structuredContent === undefined || result.isError) return undefined;
    try {
      const verdict = validator.getValidator(this.tool.outputSchema)(result.structuredContent);
      return verdict.valid ? { valid: true } : { valid: false, message: verdict.errorMessage };
    } catch (err) {
      return { valid: false, message: `schema could not be checked: ${(err as Error).message}` };
    }
  }

  private showResult(state: string, title: string, body: HTMLElement): void {
    this.result.dataset.state = state;
    replace(
      this.result,
      h(
        "div",
        { class: "result-head" },
        h("h3", null, title),
        h("span", { class: `badge state-${state}` }, state === "ok" ? "ok" : state === "error" ? "isError" : state),
      ),
      body,
    );
  }
}
