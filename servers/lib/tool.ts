// One way to define a tool, shared by every server: a schema, annotations and a handler.
import { z, type ZodObject, type ZodRawShape } from "zod";
import type { CallToolResult, Tool as ListedTool, ServerNotification, ServerRequest, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Logger } from "./log.js";
import { calledName, resolveText, type Text } from "./names.js";
import { RETRY_AFTER_META_KEY } from "./session-events.js";
import { parseArguments, publishedSchema, type Arguments } from "./tool-schema.js";

/**
 * A failure the model can act on: returned as an `isError` result with this message, and with
 * `data` (when given) as its structuredContent, so a caller reads the facts of the failure (an exit
 * code, the output so far) without parsing the message. The data is checked against the tool's
 * output schema first (see `defineTool`): official clients validate structuredContent against it
 * on errors too and reject the whole result when it does not match.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ToolError";
  }
}

export interface ToolContext {
  /** The client session this call belongs to (the hub's `_meta["agentbox/session"]`). */
  session: string;
  /** The hub's token for calling tools back as this session (stdio servers only). */
  sessionToken?: string;
  /** Aborted when the client cancels the call or the hub gives up on it. */
  signal: AbortSignal;
  workspace: string;
  log: Logger;
  /** Sends a progress notification when the caller asked for progress; otherwise does nothing. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** The raw SDK request context, for sampling, elicitation and the like. */
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
}

type Result = Promise<CallToolResult> | CallToolResult;

/**
 * The four hints every tool states: none is left out, so a client never falls back to the
 * spec's defaults (not read-only, destructive, not idempotent, open-world) for a tool by accident.
 * `title` is not among them: it is ToolInfo's own.
 */
export type ToolHints = Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">>;

/** What every tool publishes, whatever its input. */
export interface ToolInfo {
  /** Unprefixed; the hub publishes it as `<prefix>_<name>`. */
  name: string;
  /** A short human-readable name; the one place for it (never annotations.title). */
  title: string;
  /** A function when it names sibling tools: it runs once their published names are known (`toolName`). */
  description: Text;
  output?: ZodRawShape;
  annotations: ToolHints;
  /**
   * Whether a call may run as a task (the MCP tasks extension; listed as execution.taskSupport):
   * "optional" for a tool whose calls can run long (the hub answers a client that declared the
   * extension with a task and holds the call); omitted, it never does.
   */
  taskSupport?: "optional" | "required";
}

/**
 * What a call needs whoever serves the tool: a child server's tools get a ToolContext, the hub's
 * own tools (hub/tools/hub-tools.ts, hub/catalog/tool-search.ts) a context of the hub's.
 */
export interface CallContext {
  log: Logger;
}

/** A tool as written: `run` is checked by the compiler against what `input` parses to. */
export interface ToolDefinition<S extends ZodRawShape, C extends CallContext = ToolContext> extends ToolInfo {
  input: S;
  // a property, not a method, so its parameters are checked strictly (methods are bivariant)
  run: (args: Arguments<S>, ctx: C) => Result;
}

/** A tool as served: `call` takes the raw arguments, validates them against `input`, then runs. */
export interface Tool<C extends CallContext = ToolContext> extends ToolInfo {
  input: ZodRawShape;
  call(raw: unknown, ctx: C): Promise<CallToolResult>;
}

export function defineTool<S extends ZodRawShape, C extends CallContext = ToolContext>(def: ToolDefinition<S, C>): Tool<C> {
  const { run, ...info } = def;
  const output = def.output && z.object(def.output);
  return {
    ...info,
    async call(raw, ctx) {
      // the message names the published tool, the one the model can call
      const parsed = parseArguments(calledName(def.name), def.input, raw);
      if (!parsed.ok) return reply.error(parsed.message);
      let result: CallToolResult;
      try {
        result = await run(parsed.args, ctx);
      } catch (err) {
        if (!(err instanceof ToolError && err.data)) throw err;
        result = reply.failure(err.message, err.data);
      }
      if (heldReplies.has(result)) result = heldFittingSchema(result, output !== undefined);
      return result.isError && result.structuredContent !== undefined ? failureFittingSchema(result, output, ctx.log) : result;
    },
  };
}

/** A tool as tools/list shows it: descriptions resolved, schemas as JSON Schema without zod's noise. */
export function listedTool(tool: ToolInfo & { input: ZodRawShape }): ListedTool {
  return {
    name: tool.name,
    title: tool.title,
    description: resolveText(tool.description),
    inputSchema: publishedSchema(tool.input, "input"),
    ...(tool.output && { outputSchema: publishedSchema(tool.output, "output") }),
    annotations: tool.annotations,
    ...(tool.taskSupport && { execution: { taskSupport: tool.taskSupport } }),
  };
}

/**
 * An error result whose structuredContent matches the tool's output schema, or without it: a
 * client would reject the whole result (message included) over data that does not match. The
 * data sent is what the schema parsed, so keys it does not know never reach a strict client.
 */
function failureFittingSchema(result: CallToolResult, output: ZodObject | undefined, log: Logger): CallToolResult {
  const { structuredContent, ...rest } = result;
  const checked = output?.safeParse(structuredContent);
  if (checked?.success) return { ...rest, structuredContent: checked.data };
  log.warn("error data dropped: it does not match the output schema", {
    problem: checked ? checked.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ") : "the tool has no output schema",
  });
  return rest;
}

/** The results made by `reply.held`, recognised by `defineTool` (a mark no result can forge or carry over the wire). */
const heldReplies = new WeakSet<CallToolResult>();

/**
 * A held reply as the tool's clients accept it. Without an output schema it stays a normal result
 * (nothing failed). With one it becomes an error result: official clients check a normal result's
 * structuredContent against the schema and reject the whole result (message and all) with -32602
 * when it is missing, while an error result is not held to the schema.
 */
function heldFittingSchema(result: CallToolResult, hasOutputSchema: boolean): CallToolResult {
  return hasOutputSchema ? { ...result, isError: true } : result;
}

type Content = CallToolResult["content"];

export const reply = {
  text(text: string): CallToolResult {
    return { content: [{ type: "text", text }] };
  },
  /**
   * Human-readable text plus the same data as structuredContent (for tools with an outputSchema);
   * `more` follows the text (images, an embedded resource).
   */
  data(text: string, structured: Record<string, unknown>, more: Content = []): CallToolResult {
    return { content: [{ type: "text", text }, ...more], structuredContent: structured };
  },
  image(base64: string, mimeType: string, caption?: string): CallToolResult {
    const content: Content = [{ type: "image", data: base64, mimeType }];
    if (caption) content.unshift({ type: "text", text: caption });
    return { content };
  },
  /**
   * A call that did nothing because something outside the agent's reach holds what it acts on (a
   * person using the tab through a live view): the text says so, `_meta` says when to try again,
   * and `structured` (when given) is the tool's data for "nothing done". `defineTool` makes it an
   * error result for a tool with an output schema (see heldFittingSchema), a normal one otherwise.
   */
  held(text: string, retryAfterMs: number, structured?: Record<string, unknown>): CallToolResult {
    const result: CallToolResult = {
      content: [{ type: "text", text }],
      ...(structured && { structuredContent: structured }),
      _meta: { [RETRY_AFTER_META_KEY]: retryAfterMs },
    };
    heldReplies.add(result);
    return result;
  },
  /** An `isError` result: text (and `more`, e.g. figures) only, for a failure with no data to give. */
  error(message: string, more: Content = []): CallToolResult {
    return { content: [{ type: "text", text: message }, ...more], isError: true };
  },
  /**
   * An `isError` result that keeps the tool's data: the text, and `structured` as structuredContent
   * when it matches the tool's output schema (`defineTool` checks it, and drops only the data if not).
   */
  failure(message: string, structured: Record<string, unknown>, more: Content = []): CallToolResult {
    return { content: [{ type: "text", text: message }, ...more], structuredContent: structured, isError: true };
  },
};
