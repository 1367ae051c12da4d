// What hub_sessions tells a client about its tenant's tasks (tool calls run as tasks, hub/tasks/),
// and hub_cancel_task. The hub's services name the little the tools read of a task (TaskView,
// hub/sessions/services.ts); hub/hub.ts, the composition root, hands in the task store, which has it.
// A tenant's tasks are every client's of that tenant (any of them may poll one with tasks/get), so
// their ids are shown; another tenant's are never listed, counted or cancellable here.
import { z } from "zod";
import { defineTool, reply } from "../../servers/lib/tool.js";
import type { HubToolCall } from "../sessions/tool-calls.js";
import { TASK_STATUSES, type TaskView, type TenantTasks } from "../sessions/services.js";

export const taskEntry = z.object({
  id: z.string().describe("Its taskId, for tasks/get, tasks/update, tasks/cancel or hub_cancel_task"),
  tool: z.string(),
  status: z.enum(TASK_STATUSES),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().describe("How long its outcome is kept after it ends"),
  statusMessage: z.string().optional().describe("What it does or why it ended, in words (its latest progress while working)"),
  waitsForInput: z.number().optional().describe("input_required: how many questions tasks/update must answer"),
});

export type TaskEntry = z.infer<typeof taskEntry>;

export const taskListOutput = {
  tenantTasks: z.array(taskEntry).describe("Your tenant's tasks, paged by the same offset and limit (never another tenant's)"),
  tasksTotal: z.number(),
};

export function describeTask(task: TaskView): TaskEntry {
  const waiting = task.status === "input_required" ? Object.keys(task.inputRequests ?? {}).length : undefined;
  return {
    id: task.id,
    tool: task.tool,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    ...(waiting === undefined ? {} : { waitsForInput: waiting }),
  };
}

/** The caller's tenant's tasks, oldest first (a stable order, so paging does not skip or repeat one). */
export function tenantTasks(tasks: TenantTasks, tenant: string): TaskView[] {
  return [...tasks.of(tenant)].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** One line of the text a model reads. */
export function taskLine(entry: TaskEntry): string {
  const waits = entry.waitsForInput === undefined ? "" : ` · waits for input (${entry.waitsForInput} questions: answer with tasks/update)`;
  const says = entry.statusMessage === undefined ? "" : ` · ${entry.statusMessage}`;
  return `  ${entry.id}  ${entry.tool} ${entry.status}${waits}${says} · started ${entry.createdAt}, updated ${entry.lastUpdatedAt}, kept ${Math.round(entry.ttlMs / 1000)} s after it ends`;
}

/**
 * A task stopped from the hub's own tools: hub_sessions lists the tenant's tasks to every client,
 * 2025 ones (a desktop client over stdio, the playground in 2025 mode) included, which cannot send
 * tasks/cancel; without this a runaway task would hold its processes and a task slot until it ends.
 */
export const hubCancelTask = defineTool({
  name: "hub_cancel_task",
  title: "Cancel a task",
  description: "Cancel one of your tenant's tasks (listed by hub_sessions): its call ends with every process it started.",
  input: { taskId: z.string().min(1).max(200) },
  output: { taskId: z.string(), tool: z.string(), status: z.enum(TASK_STATUSES).describe("Its status now: cancelled, or how it had already ended") },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ taskId }, { hub, session }: HubToolCall & { hub: { tasks: TenantTasks } }) {
    // only the caller's own tenant's tasks are looked at: another tenant's id is as unknown as a made-up one
    const task = hub.tasks.of(session.tenant.name).find((t) => t.id === taskId);
    if (!task)
      return reply.error(
        `No task ${JSON.stringify(taskId)} of your tenant: it never existed, belongs to someone else, or its result expired. hub_sessions lists your tasks.`,
      );
    const ended = task.terminal;
    task.cancel("hub_cancel_task");
    const data = { taskId: task.id, tool: task.tool, status: task.status };
    return reply.data(
      ended
        ? `Task ${task.id} (${task.tool}) had already ended: ${task.status}.`
        : `Task ${task.id} (${task.tool}) cancelled: its call and every process it started end.`,
      data,
    );
  },
});
