// One way to define a tool, shared by every server: a schema, annotations and a handler.
import type { z, ZodRawShape } from "zod";
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Logger } from "./log.js";
import type { Text } from "./names.js";

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

type Args<S extends ZodRawShape> = z.infer<z.ZodObject<S>>;

export interface ToolDefinition<S extends ZodRawShape = ZodRawShape> {
  /** Unprefixed; the hub publishes it as `<prefix>_<name>`. */
  name: string;
  /** A short human-readable name. Every tool has one, here or as annotations.title. */
  title?: string;
  /** A function when it names sibling tools: it runs once their published names are known (`toolName`). */
  description: Text;
  input: S;
  output?: ZodRawShape;
  annotations: ToolAnnotations;
  run(args: Args<S>, ctx: ToolContext): Promise<CallToolResult> | CallToolResult;
}

export function defineTool<S extends ZodRawShape>(def: ToolDefinition<S>): ToolDefinition<ZodRawShape> {
  return def as unknown as ToolDefinition<ZodRawShape>;
}

export const reply = {
  text(text: string): CallToolResult {
    return { content: [{ type: "text", text }] };
  },
  /** Human-readable text plus the same data as structuredContent (for tools with an outputSchema). */
  data(text: string, structured: Record<string, unknown>): CallToolResult {
    return { content: [{ type: "text", text }], structuredContent: structured };
  },
  image(base64: string, mimeType: string, caption?: string): CallToolResult {
    const content: CallToolResult["content"] = [{ type: "image", data: base64, mimeType }];
    if (caption) content.unshift({ type: "text", text: caption });
    return { content };
  },
  /** An `isError` result: text only, never structuredContent (see ToolError for why). */
  error(message: string): CallToolResult {
    return { content: [{ type: "text", text: message }], isError: true };
  },
};
