// The one place where the hub's two MCP SDKs meet. The hub's sessions, catalog and call pipeline
// are written against @modelcontextprotocol/sdk 1.x (the 2025 session server is that SDK's); the
// 2026-07-28 revision is served by the SDK v2's Server (hub/modern/server.ts) and spoken to a
// child by its Client (hub/children/modern-link.ts). Both SDKs type the same JSON, not always
// alike (a tool's schema properties are `object` to one, JSON values to the other), and much of
// what the hub passes on is a child's reply, relayed as the child sent it, whose shape no type
// knows. Each crossing is a function here, by method, with a check where the shape is not known:
// cheap (the top of a result and its list items; never a walk of text or data), and never one the
// SDK makes itself right after (its Server validates every tools/call result, its Client every
// sampling and elicitation answer). A value that does not fit becomes a clear error.
import {
  inputRequired,
  type CallToolResult,
  type CompleteResult,
  type GetPromptResult,
  type InputRequest,
  type ReadResourceResult,
} from "@modelcontextprotocol/server";
import type { ServerContext, Tool as ServedTool } from "@modelcontextprotocol/server";
import type {
  ClientRequest,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitResult,
  JSONValue,
  ListRootsResult,
  RequestMethod,
} from "@modelcontextprotocol/client";
import type { Tool as ChildTool } from "@modelcontextprotocol/client";
import { ErrorCode, type Result, type ServerNotification, type ServerRequest, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { isPlainObject, protocolError } from "./jsonrpc.js";
import { TASK_SUPPORT_META_KEY } from "../../servers/lib/session-events.js";

/** A JSON value, however deep (no recursion, so no nesting overflows the stack); a property set to undefined counts as absent, as JSON.stringify drops it. */
export function isJsonValue(value: unknown): value is JSONValue {
  const pending: unknown[] = [value];
  const seen = new Set<object>();
  while (pending.length) {
    const next = pending.pop();
    if (next === null || typeof next === "string" || typeof next === "boolean") continue;
    if (typeof next === "number") {
      if (!Number.isFinite(next)) return false;
      continue;
    }
    if (typeof next !== "object") return false;
    // an object met twice is a shared one (or a cycle, which JSON.stringify refuses on the way out anyway)
    if (seen.has(next)) continue;
    seen.add(next);
    if (Array.isArray(next)) pending.push(...next);
    else if (Object.getPrototypeOf(next) === Object.prototype || Object.getPrototypeOf(next) === null) {
      for (const item of Object.values(next)) if (item !== undefined) pending.push(item);
    } else return false;
  }
  return true;
}

// ---- the hub's answers, as the SDK v2 Server's handlers return them (hub/modern/server.ts) ----

type JsonProperties = Record<string, JSONValue>;

/** A schema's properties as JSON (the 2025 SDK types each as `object`), or false when one is not JSON. */
function jsonProperties(properties: Record<string, object>): JsonProperties | false {
  const json: JsonProperties = {};
  for (const [name, schema] of Object.entries(properties)) {
    if (!isJsonValue(schema)) return false;
    json[name] = schema;
  }
  return json;
}

/**
 * The tool with its task support in `_meta` (TASK_SUPPORT_META_KEY): a 2026-07-28 listing has no
 * `execution.taskSupport` (the SDK deletes it from tools/list), yet a client of the tasks extension
 * wants to know which calls can become tasks before it asks (the playground offers "Run as a task" by it).
 */
function withTaskSupport(tool: Tool): Tool {
  const support = (tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
  if (support !== "optional" && support !== "required" && support !== "forbidden") return tool;
  return { ...tool, _meta: { ...tool._meta, [TASK_SUPPORT_META_KEY]: support } };
}

/** Each tool's v2 form, made once: the catalog keeps its tool objects until a server lists again (null: its schema is not JSON). */
const served = new WeakMap<Tool, ServedTool | null>();

/** A tool as the v2 SDK types it (its input schema's properties are JSON values there), or undefined when they are not JSON (`onLeftOut` hears it once). */
function servedTool(tool: Tool, onLeftOut?: (name: string) => void): ServedTool | undefined {
  let v2 = served.get(tool);
  if (v2 === undefined) {
    const { properties, ...input } = tool.inputSchema;
    const json = properties && jsonProperties(properties);
    // (the properties keep their place in the schema: a listing reads as its server wrote it)
    v2 = json === false ? null : { ...withTaskSupport(tool), inputSchema: json ? { ...tool.inputSchema, properties: json } : input };
    served.set(tool, v2);
    if (!v2) onLeftOut?.(tool.name);
  }
  return v2 ?? undefined;
}

/**
 * tools/list for the v2 server. Every tool the hub lists came as JSON (a server's listing, the
 * manifest) or is the hub's own, so a schema that is not JSON is the hub's bug: that tool is left
 * out (`onLeftOut` hears its name) rather than the whole list failing.
 */
export function toolsForV2(tools: readonly Tool[], onLeftOut: (name: string) => void): ServedTool[] {
  const listed: ServedTool[] = [];
  for (const tool of tools) {
    const v2 = servedTool(tool, onLeftOut);
    if (v2) listed.push(v2);
  }
  return listed;
}

/** Result keys of the other result families: a result carrying one is not a tool result, content or not (as the SDK reads it). */
const OTHER_FAMILIES = ["task", "inputRequests", "requestState"] as const;

/**
 * Decides a tool result's shape: a list of content blocks, isError a boolean if present. The blocks
 * themselves are the SDK's to check: its Server validates every tools/call result against its
 * schema before sending it (answering -32602 for one that fails), so they are not walked twice.
 */
function isToolResult(result: Result): result is CallToolResult {
  return Array.isArray(result.content) && (result.isError === undefined || typeof result.isError === "boolean");
}

/**
 * A tools/call's result for the v2 server: the child's (or a hub tool's) result, or the task the
 * call became (hub/tasks/answer.ts). A result without content is an empty one, as the SDK itself
 * reads one (a task, too, goes out with `content: []`); anything else that is not a tool result
 * becomes an error result the model can read.
 */
export function toolCallResult(result: Result, tool: string): CallToolResult {
  if (isToolResult(result)) return result;
  if (result.content === undefined && !OTHER_FAMILIES.some((key) => key in result)) return { ...result, content: [] };
  return {
    content: [
      {
        type: "text",
        text:
          `The tool '${tool}' answered with something that is not a tool result (a tool result is a list of content blocks), ` +
          "so the hub could not pass it on. Its server may be broken: try the call again, or use another tool.",
      },
    ],
    isError: true,
  };
}

const stringOrAbsent = (value: unknown) => value === undefined || typeof value === "string";

/** A content block's kind and the fields that kind requires (its annotations and _meta are the child's, as it sent them). */
function isContentBlock(block: unknown): boolean {
  if (!isPlainObject(block)) return false;
  switch (block.type) {
    case "text":
      return typeof block.text === "string";
    case "image":
    case "audio":
      return typeof block.data === "string" && typeof block.mimeType === "string";
    case "resource_link":
      return typeof block.uri === "string" && typeof block.name === "string";
    case "resource":
      return isResourceContents(block.resource);
    default:
      return false;
  }
}

function isResourceContents(contents: unknown): boolean {
  return (
    isPlainObject(contents) &&
    typeof contents.uri === "string" &&
    (typeof contents.text === "string" || typeof contents.blob === "string") &&
    stringOrAbsent(contents.mimeType)
  );
}

/** What the SDK does not check of these (its Server validates tools/call results only): each message, or contents item, down to its kind's fields. */
function isPromptResult(result: Result): result is GetPromptResult {
  return (
    Array.isArray(result.messages) &&
    result.messages.every((m) => isPlainObject(m) && (m.role === "user" || m.role === "assistant") && isContentBlock(m.content)) &&
    stringOrAbsent(result.description)
  );
}

function isReadResult(result: Result): result is ReadResourceResult {
  return Array.isArray(result.contents) && result.contents.every(isResourceContents);
}

function isCompletion(result: Result): result is CompleteResult {
  const { completion } = result;
  return (
    isPlainObject(completion) &&
    Array.isArray(completion.values) &&
    completion.values.every((value) => typeof value === "string") &&
    (completion.total === undefined || typeof completion.total === "number") &&
    (completion.hasMore === undefined || typeof completion.hasMore === "boolean")
  );
}

/** -32603 naming what the server answered and what the answer lacked. */
function notRelayable(method: string, of: string, expected: string) {
  return protocolError(
    ErrorCode.InternalError,
    `The server of ${of} answered ${method} with something that is not ${expected}, so the hub could not pass it on. ` +
      "Its server may be broken: try again, or tell whoever runs it.",
  );
}

export function promptResult(result: Result, name: string): GetPromptResult {
  if (isPromptResult(result)) return result;
  throw notRelayable("prompts/get", `prompt '${name}'`, "a prompt (a list of messages, each a role and a content block)");
}

export function readResult(result: Result, uri: string): ReadResourceResult {
  if (isReadResult(result)) return result;
  throw notRelayable("resources/read", `resource '${uri}'`, "a resource's contents (a list of items, each a uri and a text or blob)");
}

export function completionResult(result: Result, of: string): CompleteResult {
  if (isCompletion(result)) return result;
  throw notRelayable("completion/complete", of, "a completion (a list of string values)");
}

/** A notification a 2026 request's stream may carry. */
export type ModernNotification = Parameters<ServerContext["mcpReq"]["notify"]>[0];

/** A notification of a call for a 2026 request's stream; undefined for 2025-11-25's task status, which the revision has no place for (its tasks are polled). */
export function notificationForV2(notification: ServerNotification): ModernNotification | undefined {
  return notification.method === "notifications/tasks/status" ? undefined : notification;
}

/**
 * A child's question as a 2026 client is asked it (an input request), or undefined for a request
 * the revision does not let a server ask, and for sampling whose metadata is not JSON. A URL-mode
 * elicitation loses its elicitationId: the revision's shape has none (the sealed state correlates).
 */
export function inputRequestFor(request: ServerRequest): InputRequest | undefined {
  switch (request.method) {
    case "roots/list":
      return { method: request.method, params: { ...request.params } };
    case "elicitation/create": {
      const { params } = request;
      if (params.mode !== "url") return { method: request.method, params };
      const { elicitationId: _correlatedByState, mode: _url, ...url } = params;
      return inputRequired.elicitUrl(url);
    }
    case "sampling/createMessage": {
      const { metadata, tools, ...params } = request.params;
      if (metadata !== undefined && !(isJsonValue(metadata) && isPlainObject(metadata))) return undefined;
      const offered: ServedTool[] = [];
      for (const tool of tools ?? []) {
        const v2 = servedTool(tool);
        if (!v2) return undefined;
        offered.push(v2);
      }
      return { method: request.method, params: { ...params, ...(metadata && { metadata }), ...(tools && { tools: offered }) } };
    }
    default:
      return undefined;
  }
}

// ---- the hub as the SDK v2 Client of a 2026-07-28 child (hub/children/modern-link.ts) ----

/** The requests the hub sends a child on a call's behalf (its connection's own, initialize, server/discover and subscriptions/listen, are the Client's). */
type RelayedMethod = Exclude<Extract<RequestMethod, ClientRequest["method"]>, "initialize" | "server/discover" | "subscriptions/listen">;

const RELAYED: Record<RelayedMethod, true> = {
  ping: true,
  "completion/complete": true,
  "logging/setLevel": true,
  "prompts/get": true,
  "prompts/list": true,
  "resources/list": true,
  "resources/templates/list": true,
  "resources/read": true,
  "resources/subscribe": true,
  "resources/unsubscribe": true,
  "tools/call": true,
  "tools/list": true,
};

const isRelayed = (method: string): method is RelayedMethod => Object.hasOwn(RELAYED, method);

/** The method as the v2 Client types what it sends; a method it has no schema for is refused by name. */
export function relayedMethod(method: string): RelayedMethod {
  if (isRelayed(method)) return method;
  throw protocolError(ErrorCode.MethodNotFound, `The hub does not send ${method} to a 2026-07-28 server.`);
}

/** Schema properties as the 2025 SDK types them, each a schema object: a boolean schema (true: anything; false: nothing) in its object form. */
function schemaObjects(given: Record<string, unknown>, refuse: (why: string) => Error): Record<string, object> {
  const objects: Record<string, object> = {};
  for (const [name, value] of Object.entries(given)) {
    if (typeof value === "boolean") objects[name] = value ? {} : { not: {} };
    else if (isPlainObject(value)) objects[name] = value;
    else throw refuse(`property '${name}' is not a JSON Schema (an object or a boolean)`);
  }
  return objects;
}

/**
 * A tool a 2026 child listed, in the 2025 SDK's types the catalog holds: each schema property a
 * schema object. A listing whose schemas are no JSON Schema is refused naming the tool, as the
 * 2025 SDK refuses a stdio child's. An output schema whose root is not an object (the revision
 * allows any root, SEP-2106; 2025-era clients take only objects, and the catalog serves both) is
 * left out, and `onLeftOut` says so: the tool is listed and called as before, its structured
 * content undescribed.
 */
export function toolFromV2(tool: ChildTool, server: string, onLeftOut: (why: string) => void): Tool {
  const refused = (schema: string) => (why: string) =>
    protocolError(ErrorCode.InvalidParams, `The '${server}' server listed tool '${tool.name}', whose ${schema} ${why}; the hub cannot list it.`);
  const { outputSchema, ...rest } = tool;
  const { properties, ...input } = tool.inputSchema;
  const objectRooted = outputSchema && outputSchema.type !== "object" ? undefined : outputSchema;
  if (outputSchema && !objectRooted) onLeftOut(`its outputSchema's root is not an object, which 2025-era clients cannot take`);
  return {
    ...rest,
    inputSchema: properties ? { ...tool.inputSchema, properties: schemaObjects(properties, refused("inputSchema")) } : input,
    ...(objectRooted && { outputSchema: objectOutput(objectRooted, refused("outputSchema")) }),
  };
}

function objectOutput(schema: NonNullable<ChildTool["outputSchema"]>, refuse: (why: string) => Error): NonNullable<Tool["outputSchema"]> {
  const { properties, required } = schema;
  if (properties !== undefined && !isPlainObject(properties)) throw refuse("properties are not an object");
  if (required !== undefined && !(Array.isArray(required) && required.every((name) => typeof name === "string")))
    throw refuse("required is not a list of names");
  return { ...schema, type: "object", ...(properties && { properties: schemaObjects(properties, refuse) }), ...(required && { required }) };
}

// A 2025-era child (a protocol "auto" that landed there) asks with requests of its own; the caller's answer
// (a 2026 round's, a 2025 client's) is relayed: its kind's shape checked here, the rest by the Client where it checks.

/** Sampling: the Client validates the answer right after (its sampling result schema). */
function isSamplingAnswer(answer: Result): answer is CreateMessageResult | CreateMessageResultWithTools {
  return (
    typeof answer.model === "string" &&
    (answer.role === "user" || answer.role === "assistant") &&
    (isPlainObject(answer.content) || Array.isArray(answer.content))
  );
}

/** Elicitation: the Client validates the answer right after (its elicitation result schema). */
function isElicitAnswer(answer: Result): answer is ElicitResult {
  return (
    (answer.action === "accept" || answer.action === "decline" || answer.action === "cancel") && (answer.content === undefined || isPlainObject(answer.content))
  );
}

/** Roots: the Client passes the answer on unchecked, so each root is checked here. */
function isRootsAnswer(answer: Result): answer is ListRootsResult {
  return Array.isArray(answer.roots) && answer.roots.every((root) => isPlainObject(root) && typeof root.uri === "string" && stringOrAbsent(root.name));
}

function notAnAnswer(method: string, expected: string) {
  return protocolError(ErrorCode.InvalidParams, `The client's answer to ${method} is not ${expected}, so the hub could not pass it on.`);
}

export function samplingAnswer(answer: Result): CreateMessageResult | CreateMessageResultWithTools {
  if (isSamplingAnswer(answer)) return answer;
  throw notAnAnswer("sampling/createMessage", "a message (a role, content and the model)");
}

export function elicitAnswer(answer: Result): ElicitResult {
  if (isElicitAnswer(answer)) return answer;
  throw notAnAnswer("elicitation/create", "an elicitation result (an action: accept, decline or cancel)");
}

export function rootsAnswer(answer: Result): ListRootsResult {
  if (isRootsAnswer(answer)) return answer;
  throw notAnAnswer("roots/list", "a list of roots (each a uri)");
}
