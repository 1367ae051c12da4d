// The `tools` global of a JavaScript session: one async function per hub tool, generated from
// the hub's live tools/list, calling the hub as the same client session that runs the code.
// `await tools.file_read({ path })` returns the structured content if any, else the text, and
// throws a ToolCallError when the tool reports an error; its `result` is the structured content
// the failed call still carries (a command's exit code and output), or undefined.
import util from "node:util";
import { SESSION_TOKEN_ENV, SESSION_TOKEN_HEADER } from "../../lib/session-events.js";

interface ToolInfo {
  name: string;
  description?: string;
  inputSchema?: { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
}

interface CallResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

export type ToolFunction = ((args?: Record<string, unknown>) => Promise<unknown>) & { description: string; inputSchema: unknown };

/** Marks an object we made, so a user's own `tools` variable is never overwritten. */
export const GENERATED = Symbol.for("agentbox.tools");

let requestId = 0;

async function rpc(method: string, params: Record<string, unknown>): Promise<unknown> {
  const url = process.env.AGENTBOX_HUB_URL;
  if (!url) throw new Error("Tools are unavailable: this code session was not started by an agentbox hub (AGENTBOX_HUB_URL is not set).");
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        [SESSION_TOKEN_HEADER]: process.env[SESSION_TOKEN_ENV] ?? "",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++requestId, method, params }),
    });
  } catch (err) {
    throw new Error(`Cannot reach the hub at ${url}: ${(err as Error).message}`, { cause: err });
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`The hub refused ${method}: HTTP ${response.status} ${text.slice(0, 500)}`);
  const reply = JSON.parse(text) as { result?: unknown; error?: { message?: string } };
  if (reply.error) throw new Error(`${method} failed: ${reply.error.message ?? JSON.stringify(reply.error)}`);
  return reply.result ?? {};
}

/** An error result of a tool; `result` is its structured content, if it had any. */
export class ToolCallError extends Error {
  constructor(
    message: string,
    readonly result?: unknown,
  ) {
    super(message);
    this.name = "ToolCallError";
  }
}

function unwrap(name: string, result: CallResult): unknown {
  const content = result.content ?? [];
  const text = content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
  if (result.isError) throw new ToolCallError(`${name}: ${text || "the tool reported an error"}`, result.structuredContent ?? undefined);
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  return text || content.length === 0 ? text : content;
}

export async function callTool(name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  return unwrap(name, (await rpc("tools/call", { name, arguments: args })) as CallResult);
}

function signature(tool: ToolInfo): string {
  const required = new Set(tool.inputSchema?.required ?? []);
  const params = Object.entries(tool.inputSchema?.properties ?? {}).map(
    ([key, prop]) => `${key}${required.has(key) ? "" : "?"}: ${prop.type ?? "any"}${prop.description ? ` /* ${prop.description} */` : ""}`,
  );
  return `tools.${tool.name}({ ${params.join(", ")} })${tool.description ? ` — ${tool.description}` : ""}`;
}

function makeFunction(tool: ToolInfo): ToolFunction {
  const fn = async (args: Record<string, unknown> = {}) => callTool(tool.name, args);
  Object.defineProperty(fn, "name", { value: tool.name });
  return Object.assign(fn, {
    description: tool.description ?? "",
    inputSchema: tool.inputSchema ?? {},
    [util.inspect.custom]: () => signature(tool),
    toString: () => signature(tool),
  });
}

/** Fetch the catalog and build the tools object; a failure yields an object that explains it. */
export async function loadTools(): Promise<Record<string | symbol, unknown>> {
  try {
    const listed = (await rpc("tools/list", {})) as { tools?: ToolInfo[] };
    const tools: Record<string | symbol, unknown> = { [GENERATED]: true };
    for (const tool of listed.tools ?? []) tools[tool.name] = makeFunction(tool);
    Object.defineProperty(tools, "call", { value: callTool, enumerable: false });
    return tools;
  } catch (err) {
    const reason = (err as Error).message;
    // every property access explains why there are no tools, instead of "undefined is not a function"
    return new Proxy({ [GENERATED]: true } as Record<string | symbol, unknown>, {
      get(target, key) {
        if (typeof key === "symbol") return target[key];
        return async () => {
          throw new Error(reason);
        };
      },
    });
  }
}
