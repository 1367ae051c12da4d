// hub_new_context: a new context of the caller's tenant and the handle that names it (hub/sessions/contexts.ts),
// and the `context` argument of the hub's own tools that describe or end one.
import { z } from "zod";
import type { Tool as ListedTool } from "@modelcontextprotocol/sdk/types.js";
import { defineTool, reply } from "../../servers/lib/tool.js";
import { CONTEXT_ARGUMENT, withContextArgument } from "../catalog/context-argument.js";
import { HUB_CONTEXT_TOOLS, NEW_CONTEXT_TOOL } from "../sessions/contexts.js";
import type { SessionServices } from "../sessions/services.js";
import type { HubToolCall } from "../sessions/tool-calls.js";

export const hubNewContext = defineTool({
  name: NEW_CONTEXT_TOOL,
  title: "New context",
  description:
    "Open a context with its own terminals, interpreters and browser pages; returns a handle to pass " +
    `as \`${CONTEXT_ARGUMENT}\` to the tools that take one to work there. It ends when idle or expired, or with ` +
    `hub_end_session given that \`${CONTEXT_ARGUMENT}\`; it counts against your session limit.`,
  input: {},
  output: {
    context: z.string().describe(`The handle: pass it as the \`${CONTEXT_ARGUMENT}\` argument`),
    expiresAt: z.string().describe("When the context ends at the latest (ISO 8601), used or not"),
    replica: z.string().optional().describe("The replica that holds it, when the hub is one of several"),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(_args, { hub, session }: HubToolCall & { hub: SessionServices }) {
    const minted = await hub.contexts.mint(session);
    if (typeof minted === "string") return reply.error(minted);
    const data = { context: minted.handle, expiresAt: minted.expiresAt.toISOString(), ...(hub.replica ? { replica: hub.replica } : {}) };
    return reply.data(
      `New context ${data.context}\nPass it as \`${CONTEXT_ARGUMENT}\` to the tools that take one (terminal, code, browser…) to work in this context; ` +
        `calls without it use your default context. It expires at ${data.expiresAt}.`,
      data,
    );
  },
});

/** A hub tool as listed: with the `context` argument when it describes or ends a context. */
export function offerContext(tool: ListedTool): ListedTool {
  return (HUB_CONTEXT_TOOLS.has(tool.name) && withContextArgument(tool)) || tool;
}
