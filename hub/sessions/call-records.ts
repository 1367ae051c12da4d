// What the hub records of each tool call and session: an audit line (hub/observability/audit.ts)
// and the session's recent calls (hub_calls, the playground). Built from what the hub knows of the
// caller (its tenant, session, era, client), never from its credentials or, unless the operator
// asks, its arguments; a credential the hub minted is redacted from what the caller chose (the
// arguments, the tool's name, the client's) wherever it stands in it.
import { CLIENT_INFO_META_KEY } from "@modelcontextprotocol/server";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BOOKKEEPING_META_KEY } from "../../servers/lib/session-events.js";
import { HUB } from "../catalog/selection.js";
import { ChildUnavailableError, MessageTooLargeError } from "../children/child.js";
import { sizeOf } from "../children/message-sizes.js";
import { QueueFullError } from "../children/queue.js";
import { auditedArguments } from "../observability/audit-arguments.js";
import { AuditLog, FIELD_CHARS, type AuditOutcome, type SessionRecord } from "../observability/audit.js";
import { KEY_CHARS, type MintedSecrets } from "../observability/minted-secrets.js";
import type { AuditConfig } from "../config/audit.js";
import { RecentCalls } from "../observability/recent-calls.js";
import type { Params } from "./forward.js";
import { eraOf, type CallChannel, type ClientSession, type CloseReason } from "./registry.js";

/** What ToolCalls learns of a call on its way (./tool-calls.ts) that its result does not say. */
export interface CallNote {
  /** The session it ran in: the caller's, or the context its `context` argument named. */
  session?: ClientSession;
  /** The server that ran it ("hub" for the hub's own tools). */
  server?: string;
  /** Why it never ran: not_selected, rate_limited, context, unknown_tool. */
  refused?: string;
  /** What the child's call threw when the hub answered with a message instead. */
  failure?: unknown;
}

export type CallEnding = { result: CallToolResult } | { error: unknown };

/**
 * The hub's own tools that only read what their caller may see anyway. A call of one that its client
 * marked as bookkeeping (BOOKKEEPING_META_KEY) and that succeeded, or was cancelled (a page closed
 * while its panel refreshed), changed nothing, so it is counted rather than written to the audit
 * trail; the mark on any other call, or on a call that failed or was refused, is ignored: a client
 * cannot hide what it did.
 */
const READ_ONLY_HUB_TOOLS: ReadonlySet<string> = new Set(["hub_status", "hub_sessions", "hub_calls", "hub_metrics"]);

export class CallRecords {
  readonly recent = new RecentCalls();

  constructor(
    private readonly audit: AuditLog,
    private readonly withArguments: boolean,
    private readonly secrets: MintedSecrets,
    /** Counts a bookkeeping call left out of the trail (the hub's metrics). */
    private readonly onBookkeeping: (tool: string) => void = () => undefined,
  ) {}

  /** The records AGENTBOX_AUDIT_* ask for; throws when the trail's file cannot be opened. */
  static configured(config: AuditConfig, secrets: MintedSecrets, onFailure: (message: string) => void, onBookkeeping?: (tool: string) => void): CallRecords {
    const { log } = config;
    const destination = log === "off" ? "off" : typeof log === "object" ? log : { stream: process[log] };
    return new CallRecords(new AuditLog(destination, config.queueBytes, onFailure), config.arguments, secrets, onBookkeeping);
  }

  /** Text the caller chose, as the trail keeps it (cut to FIELD_CHARS there): searched no further than that. */
  private shown(text: string): string {
    return this.secrets.redact(text.length > FIELD_CHARS + KEY_CHARS ? text.slice(0, FIELD_CHARS + KEY_CHARS) : text);
  }

  /** Records a call that began at `startedAt` (Date.now()) and `started` (performance.now()). */
  called(caller: ClientSession, params: Params, channel: CallChannel, note: CallNote, started: number, startedAt: number, ending: CallEnding): void {
    const session = note.session ?? caller;
    const tool = String(params.name ?? "");
    const { outcome, errorType } = outcomeOf(note, channel, ending);
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    const taskId = channel.taskId?.();
    this.recent.add(session, {
      tool: clip(tool),
      outcome,
      durationMs,
      startedAt,
      ...(errorType ? { errorType } : {}),
      ...(taskId ? { taskId } : {}),
    });
    if (
      (outcome === "ok" || outcome === "cancelled") &&
      note.server === HUB &&
      READ_ONLY_HUB_TOOLS.has(tool) &&
      params._meta?.[BOOKKEEPING_META_KEY] === true
    ) {
      this.onBookkeeping(tool);
      return;
    }
    if (!this.audit.enabled) return;
    const era = eraOf(session);
    const info = (params._meta?.[CLIENT_INFO_META_KEY] as ClientSession["clientInfo"]) ?? caller.clientInfo;
    // one object per call, its absent fields undefined (the line leaves them out)
    this.audit.call({
      tenant: session.tenant.name,
      session: session.label,
      transport: session.kind,
      era: era.era,
      protocolVersion: era.protocolVersion,
      client: info ? this.shown(`${String(info.name)} ${String(info.version)}`) : undefined,
      tool: this.shown(tool),
      server: note.server || undefined,
      outcome,
      errorType: errorType || undefined,
      durationMs,
      bytesIn: sizeOf(params.arguments ?? {}),
      bytesOut: "result" in ending ? sizeOf(ending.result) : undefined,
      taskId: taskId || undefined,
      arguments: this.withArguments ? auditedArguments(params.arguments ?? {}, (text) => this.secrets.redact(text)) : undefined,
    });
  }

  opened(session: ClientSession): void {
    this.audit.session({ ...who(session), event: "opened" });
  }

  /** Writes out what the trail holds (the hub stops). */
  close(): Promise<void> {
    return this.audit.close();
  }

  closed(session: ClientSession, reason: CloseReason): void {
    this.audit.session({ ...who(session), event: "closed", reason, ageSeconds: Math.round(session.ageMs / 1000) });
  }
}

function who(session: ClientSession): Pick<SessionRecord, "tenant" | "session" | "transport"> {
  return { tenant: session.tenant.name, session: session.label, transport: session.kind };
}

function outcomeOf(note: CallNote, channel: CallChannel, ending: CallEnding): { outcome: AuditOutcome; errorType?: string } {
  if (note.refused) return { outcome: "refused", errorType: note.refused };
  if (channel.signal.aborted) return { outcome: "cancelled" };
  if ("error" in ending) return failureOf(ending.error);
  if (note.failure !== undefined) return failureOf(note.failure);
  return ending.result.isError ? { outcome: "error", errorType: "tool_error" } : { outcome: "ok" };
}

function failureOf(err: unknown): { outcome: AuditOutcome; errorType: string } {
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return { outcome: "timeout", errorType: "request_timeout" };
    if (err.code === ErrorCode.ConnectionClosed) return { outcome: "error", errorType: "server_exited" };
    return { outcome: "error", errorType: `protocol_error ${err.code}` };
  }
  if (err instanceof ChildUnavailableError) return { outcome: "error", errorType: "server_unavailable" };
  if (err instanceof MessageTooLargeError) return { outcome: "error", errorType: "message_too_large" };
  if (err instanceof QueueFullError) return { outcome: "error", errorType: "server_busy" };
  return { outcome: "error", errorType: "hub_error" };
}

const TOOL_CHARS = 128;
const clip = (name: string) => (name.length > TOOL_CHARS ? `${name.slice(0, TOOL_CHARS - 1)}…` : name);
