// The `context` argument the hub adds to the tools of servers that keep state per client session
// (a server declaring SESSION_STATE_CAPABILITY, or one configured `instances: "session"`): a
// client passes a handle from hub_new_context there to run the call in that context instead of its
// default one (hub/sessions/contexts.ts). The argument is marked `x-mcp-header`, so a 2026-07-28
// client mirrors it into the Mcp-Param-Context header and a router can send the call to the
// replica named at the handle's start. The hub strips it before the child sees the call.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { SESSION_STATE_CAPABILITY } from "../../servers/lib/session-events.js";
import type { Child } from "../children/child.js";

export const CONTEXT_ARGUMENT = "context";
/** The header is Mcp-Param-Context (deploy/nginx routes on it). */
export const CONTEXT_HEADER = "Context";

/**
 * No description: some forty tools carry it on every turn of a model (~2 KB as it is), and
 * hub_new_context's description says once what to pass here.
 */
const CONTEXT_PROPERTY = { type: "string", "x-mcp-header": CONTEXT_HEADER } as const;

/** Whether a server keeps state per client session, so its tools take a `context`. */
export function keepsSessionState(child: Child): boolean {
  return child.config.instances === "session" || Boolean(child.capabilities.experimental?.[SESSION_STATE_CAPABILITY]);
}

/**
 * The tool as listed with the `context` argument, or undefined when it cannot take one: its own
 * schema already has an argument of that name (the hub would take the child's argument away), or
 * already declares the header.
 */
export function withContextArgument(tool: Tool): Tool | undefined {
  const properties = tool.inputSchema.properties ?? {};
  if (CONTEXT_ARGUMENT in properties || declaresHeader(tool.inputSchema)) return undefined;
  return { ...tool, inputSchema: { ...tool.inputSchema, properties: { ...properties, [CONTEXT_ARGUMENT]: CONTEXT_PROPERTY } } };
}

/** Whether a schema names the Context header on any of its properties, at any depth (header names are case-insensitive). */
function declaresHeader(schema: unknown): boolean {
  const { properties } = (schema ?? {}) as { properties?: Record<string, unknown> };
  if (typeof properties !== "object" || properties === null) return false;
  return Object.values(properties).some((property) => {
    const header = (property as Record<string, unknown> | null)?.["x-mcp-header"];
    return (typeof header === "string" && header.toLowerCase() === CONTEXT_HEADER.toLowerCase()) || declaresHeader(property);
  });
}
