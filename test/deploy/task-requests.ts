// The tasks extension's requests as a 2026-07-28 client sends them (raw, to a hub or through the
// router), for the replica tests: a tool call that becomes a task, and tasks/get|update|cancel.
import assert from "node:assert/strict";
import type { TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { envelope, postModern, type ModernReply } from "../hub/modern/modern-client.js";

const TASKS = "io.modelcontextprotocol/tasks";
/** The envelope of a request whose client declared the tasks extension (and can be asked elicitation). */
export const withTasks = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { [TASKS]: {} } } });
const auth = (key: string | undefined): Record<string, string> => (key ? { Authorization: `Bearer ${key}` } : {});

let nextId = 1;
export const callAsTask = (target: TestHub, key: string | undefined, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}) =>
  postModern(target, { id: nextId++, method: "tools/call", params: { name, arguments: args, _meta: withTasks } }, { ...auth(key), ...headers });

/** tasks/get|update|cancel as the extension sends them: Mcp-Method and Mcp-Name (the task id) beside the body. */
export const taskRequest = (target: TestHub, key: string | undefined, method: string, taskId: string, extra: Record<string, unknown> = {}) =>
  postModern(target, { id: nextId++, method, params: { taskId, ...extra, _meta: withTasks } }, { ...auth(key), "Mcp-Name": taskId });

/** The task id of a tools/call answered with a task. */
export function created(reply: ModernReply): string {
  assert.equal(reply.json?.result?.resultType, "task", `${reply.res.status} ${reply.text}`);
  return String(reply.json?.result?.taskId);
}

export const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> } | undefined)?.content ?? []).map((c) => c.text ?? "").join("");

/** Polls through `target` until the task is in one of `statuses`. */
export const untilStatus = (target: TestHub, key: string | undefined, taskId: string, statuses: string[], ms = 30_000) =>
  until(
    `task ${taskId} to be ${statuses.join(" or ")}`,
    async () => {
      const reply = await taskRequest(target, key, "tasks/get", taskId);
      const task = reply.json?.result;
      assert.ok(task, `${reply.res.status} ${reply.text}`);
      return statuses.includes(String(task.status)) && task;
    },
    ms,
    100,
  );
