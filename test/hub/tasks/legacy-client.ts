// A 2025-11-25 client (the v1 SDK's Client over Streamable HTTP) using the experimental tasks
// against a test hub, and what the tasks tests share: tenants' keys, task creation as the wire
// has it, waiting for a status, ending a session for good.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema, McpError, type ClientCapabilities, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

export const newKey = (name: string) => `${name}-${randomBytes(16).toString("hex")}`;

/** What a client that does tasks declares at initialize (and it can be asked elicitation). */
export const DOES_TASKS: ClientCapabilities = { tasks: { list: {}, cancel: {} }, elicitation: {} };

export const connectAs = (hub: TestHub, key: string, capabilities: ClientCapabilities = DOES_TASKS) =>
  hub.connect({ headers: { Authorization: `Bearer ${key}` }, capabilities });

/** tools/call with params.task, as the wire carries it: the hub's answer is the task. */
export async function startTask(client: Client, name: string, args: Record<string, unknown>, task: Record<string, unknown> = { ttl: 60_000 }): Promise<Task> {
  const created = await client.request({ method: "tools/call", params: { name, arguments: args, task } }, CreateTaskResultSchema);
  return created.task;
}

export const TERMINAL = ["completed", "failed", "cancelled"];

export const untilStatus = (client: Client, taskId: string, statuses: string[], ms = 30_000) =>
  until(
    `task ${taskId} to be ${statuses.join(" or ")}`,
    async () => {
      const task = await client.experimental.tasks.getTask(taskId);
      return statuses.includes(task.status) && task;
    },
    ms,
    100,
  );

/** The session ends for good (DELETE), as a client that is done or gone: the hub closes it and tells its children. */
export async function endSession(client: Client): Promise<void> {
  await (client.transport as StreamableHTTPClientTransport).terminateSession();
  await client.close();
}

/** The JSON-RPC error a request is answered with (fails the test when it succeeds). */
export async function rpcError(request: Promise<unknown>): Promise<McpError> {
  const outcome = await request.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  assert.ok("error" in outcome, `expected an error, got ${JSON.stringify((outcome as { value: unknown }).value)}`);
  assert.ok(outcome.error instanceof McpError, String(outcome.error));
  return outcome.error;
}

export const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");
