// The SDK v2 client speaking MCP 2026-07-28 to a test hub, and the raw requests that revision's
// clients send (the envelope in params._meta, the standard headers), for what the client hides.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TestHub } from "../../helpers/hub.js";

export const MODERN = "2026-07-28";

export interface ModernOptions {
  headers?: Record<string, string>;
  /** Appended to the hub's URL, e.g. "?servers=file". */
  query?: string;
  mode?: "auto" | { pin: string };
  capabilities?: Record<string, unknown>;
}

export async function connectModern(hub: TestHub, options: ModernOptions = {}): Promise<Client> {
  const client = new Client(
    { name: "modern-test", version: "1.0.0" },
    { versionNegotiation: { mode: options.mode ?? { pin: MODERN } }, ...(options.capabilities ? { capabilities: options.capabilities } : {}) },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(hub.url + (options.query ?? "")), { requestInit: { headers: options.headers ?? {} } }));
  return client;
}

export async function callModern(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export const envelope = (overrides: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
  ...overrides,
});

/** The envelope of a request whose client can be asked sampling. */
export const withSampling = envelope({ "io.modelcontextprotocol/clientCapabilities": { sampling: {} } });

/** A client's answer to sampling/createMessage. */
export const samplingAnswer = (text: string) => ({ role: "assistant", content: { type: "text", text }, model: "test-model" });

/** A tools/call whose child (the conformance fixture) asks its client sampling/createMessage: `extra` adds to its params (requestState, inputResponses). */
export const samplingCall = (extra: Record<string, unknown> = {}) => ({
  id: 1,
  method: "tools/call",
  params: { name: "conformance_test_sampling", arguments: { prompt: "who are you?" }, _meta: withSampling, ...extra },
});

/** A raw 2026-07-28 POST: the body as given, the standard headers it should carry unless `headers` says otherwise ("" leaves one out). */
export interface ModernReply {
  res: Response;
  text: string;
  json?: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

export async function postModern(hub: TestHub, body: Record<string, unknown>, headers: Record<string, string> = {}, query = ""): Promise<ModernReply> {
  const params = body.params as { name?: string; uri?: string } | undefined;
  const all: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": String(body.method),
    ...(params?.name ? { "Mcp-Name": params.name } : params?.uri ? { "Mcp-Name": params.uri } : {}),
    ...headers,
  };
  const res = await fetch(hub.url + query, {
    method: "POST",
    headers: Object.fromEntries(Object.entries(all).filter(([, value]) => value !== "")),
    body: JSON.stringify({ jsonrpc: "2.0", ...body }),
  });
  const text = await res.text();
  // a reply that streamed (SSE) carries its JSON-RPC message in the last data line
  const data = res.headers.get("content-type")?.includes("text/event-stream")
    ? (text
        .match(/^data: (.*)$/gm)
        ?.pop()
        ?.slice(6) ?? "")
    : text;
  return {
    res,
    text,
    json: data ? (JSON.parse(data) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }) : undefined,
  };
}

/** The envelope of a request whose client declared the tasks extension (and can be asked elicitation). */
export const withTasks = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } });

let taskRequestId = 1;

/** A tools/call that must become a task: its taskId. */
export async function startTask(hub: TestHub, headers: Record<string, string>, name: string, args: Record<string, unknown>): Promise<string> {
  const reply = await postModern(hub, { id: taskRequestId++, method: "tools/call", params: { name, arguments: args, _meta: withTasks } }, headers);
  if (reply.json?.result?.resultType !== "task") throw new Error(`${name} did not become a task: ${reply.text}`);
  return String(reply.json.result.taskId);
}

/** tasks/get: the task as the hub shows it, or undefined with the error. */
export async function getTask(hub: TestHub, headers: Record<string, string>, taskId: string): Promise<Record<string, unknown> | undefined> {
  return (await postModern(hub, { id: taskRequestId++, method: "tasks/get", params: { taskId, _meta: withTasks } }, { ...headers, "Mcp-Name": taskId })).json
    ?.result;
}
