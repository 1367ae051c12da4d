// One way to define a tool, shared by every server: a schema, annotations and a handler.
import type { ZodRawShape } from "zod";
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Logger } from "./log.js";
import { toolName, type Text } from "./names.js";
import { parseArguments, type Arguments } from "./tool-schema.js";

/**
 * A failure the model can act on: returned as an `isError` result with this message. It carries
 * no data beside the message on purpose: official clients validate any structuredContent against
 * the tool's outputSchema, also on errors, and reject the whole result when it does not match, so
 * the facts of a failure belong in the message the model reads.
 */
export class ToolError extends Error {
  constructor(message: string) {
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

/** What every tool publishes, whatever its input. */
export interface ToolInfo {
  /** Unprefixed; the hub publishes it as `<prefix>_<name>`. */
  name: string;
  /** A short human-readable name; the one place for it (never annotations.title). */
  title: string;
  /** A function when it names sibling tools: it runs once their published names are known (`toolName`). */
  description: Text;
  output?: ZodRawShape;
  annotations: Omit<ToolAnnotations, "title">;
}

/** A tool as written: `run` is checked by the compiler against what `input` parses to. */
export interface ToolDefinition<S extends ZodRawShape> extends ToolInfo {
  input: S;
  // a property, not a method, so its parameters are checked strictly (methods are bivariant)
  run: (args: Arguments<S>, ctx: ToolContext) => Result;
}

/** A tool as served: `call` takes the raw arguments, validates them against `input`, then runs. */
export interface Tool extends ToolInfo {
  input: ZodRawShape;
  call(raw: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

export function defineTool<S extends ZodRawShape>(def: ToolDefinition<S>): Tool {
  const { run, ...info } = def;
  return {
    ...info,
    async call(raw, ctx) {
      // the message names the published tool, the one the model can call
      const parsed = parseArguments(toolName(def.name), def.input, raw);
      if (!parsed.ok) return reply.error(parsed.message);
      return run(parsed.args, ctx);
    },
  };
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
  /** An `isError` result: text (and `more`, e.g. figures) only, never structuredContent (see ToolError for why). */
  error(message: string, more: Content = []): CallToolResult {
    return { content: [{ type: "text", text: message }, ...more], isError: true };
  },
};
