// hub_calls: the calling session's (or 2026 context's) latest tool calls with their outcomes and
// durations, from the records the audit trail is written from (hub/sessions/call-records.ts). Only the
// caller's own: another session's calls are not its news, and no arguments are kept to show.
import { z } from "zod";
import { defineTool, reply } from "../../servers/lib/tool.js";
import { RECENT_CALLS } from "../observability/recent-calls.js";
import type { SessionServices } from "../sessions/services.js";
import type { HubToolCall } from "../sessions/tool-calls.js";

const recentCall = z.object({
  tool: z.string(),
  outcome: z.enum(["ok", "error", "cancelled", "refused", "timeout"]),
  durationMs: z.number().describe("From the hub receiving the call to its answer"),
  at: z.string().describe("When it started (ISO 8601)"),
  errorType: z.string().optional().describe("Why it did not end ok: tool_error, rate_limited, request_timeout, server_exited…"),
  taskId: z.string().optional().describe("The task that ran it, when it ran as one"),
});

export const hubCalls = defineTool({
  name: "hub_calls",
  title: "Your recent calls",
  description: `Your session's latest tool calls (up to ${RECENT_CALLS}), newest first: each one's tool, outcome, duration and error type.`,
  input: { limit: z.number().int().min(1).max(RECENT_CALLS).default(20).describe("How many calls") },
  output: { calls: z.array(recentCall) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ limit }, { hub, session }: HubToolCall & { hub: SessionServices }) {
    const calls = hub.records.recent.of(session, limit);
    const lines = calls.map((c) => `${c.at}  ${c.tool}  ${c.outcome}${c.errorType ? ` (${c.errorType})` : ""}  ${c.durationMs} ms`);
    return reply.data(lines.length ? lines.join("\n") : "No tool calls in this session yet.", { calls });
  },
});
