// The raw 2026-07-28 requests of a client that declared the tasks extension (io.modelcontextprotocol/tasks),
// for two tenants (alice, bob), shared by the tasks tests.
import { randomBytes } from "node:crypto";
import type { TestHub } from "../../helpers/hub.js";
import { envelope, postModern } from "../modern/modern-client.js";

export const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
export const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
export const TENANTS = { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } };
export const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
export const TASKS = "io.modelcontextprotocol/tasks";
/** The envelope of a request whose client declared the tasks extension (and can be asked elicitation). */
export const withTasks = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { [TASKS]: {} } } });

let nextId = 1;
/** A tools/call; `extra` adds to its params (inputResponses, requestState). */
export const call = (hub: TestHub, key: string, name: string, args: Record<string, unknown>, meta = withTasks, extra: Record<string, unknown> = {}) =>
  postModern(hub, { id: nextId++, method: "tools/call", params: { name, arguments: args, _meta: meta, ...extra } }, auth(key));
/** tasks/get, tasks/update or tasks/cancel, routed by its task (Mcp-Name). */
export const taskRequest = (hub: TestHub, key: string, method: string, taskId: string, extra: Record<string, unknown> = {}, meta = withTasks) =>
  postModern(hub, { id: nextId++, method, params: { taskId, ...extra, _meta: meta } }, { ...auth(key), "Mcp-Name": taskId });
