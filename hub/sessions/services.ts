// What the sessions room uses of the hub as a whole. hub/hub.ts, the composition root, provides it;
// the per-session server, the hub's own tools and the stdio front take it instead of importing
// the root, so nothing below the top imports back up.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolRequest, CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../servers/lib/log.js";
import type { SessionView } from "../catalog/selection.js";
import type { HubMetrics } from "../observability/metrics.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import type { HubStatus } from "../observability/hub-status.js";
import type { RateLimits } from "./rate-limits.js";
import type { ClientSession, SessionRegistry } from "./registry.js";
import type { ToolCalls } from "./tool-calls.js";
import type { Contexts } from "./contexts.js";
import type { Previews } from "../previews/previews.js";
import type { RecordingLinks } from "../previews/recordings.js";
import type { LiveViews } from "../live/views.js";
import type { CallRecords } from "./call-records.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import type { Clock } from "../protocol/clock.js";

export interface SessionServices {
  readonly version: string;
  readonly log: Logger;
  readonly limits: RateLimits;
  readonly metrics: HubMetrics;
  readonly toolCalls: ToolCalls;
  readonly sessions: SessionRegistry;
  readonly tenants: readonly ServedTenant[];
  /** Contexts named by handle (./contexts.ts). */
  readonly contexts: Contexts;
  /** What a room above adds to every 2025-era session's server (the 2025-11-25 tasks, hub/tasks/legacy.ts). */
  readonly sessionTasks?: SessionServerExtension;
  /** Tool calls run as tasks, by tenant (hub/tasks/store.ts): hub_sessions lists them, hub_cancel_task ends one. */
  readonly tasks: TenantTasks;
  /** Previews of apps the tenants' processes serve (hub/previews/): hub_preview opens one, a session's end ends its own. */
  readonly previews: Previews;
  /** Links that download the sessions' recordings (hub/previews/recordings.ts): hub_recordings makes them, a session's end ends its own. */
  readonly recordings: RecordingLinks;
  /** Live views of the tenants' tabs and terminals (hub/live/): hub_live_view opens one, a session's end ends its own. */
  readonly live: LiveViews;
  /** The audit trail and each session's recent calls (hub_calls shows the caller's). */
  readonly records: CallRecords;
  /** The credentials the hub minted, so nothing it writes down shows them (hub/observability/minted-secrets.ts). */
  readonly secrets: MintedSecrets;
  /** This replica's name (AGENTBOX_REPLICA), when the hub is one of several. */
  readonly replica?: string;
  /** The hub's time (hub/protocol/clock.ts). */
  readonly clock: Clock;
  /** The hub's report; one tenant's view when asked for a tenant. */
  status(tenant?: ServedTenant): HubStatus;
  /** A session opened without admission checks (the one stdio session). */
  newSession(id: string, kind: ClientSession["kind"], tenant: ServedTenant, clientKey: string, view?: SessionView): ClientSession;
}

/** A plain tools/call of a session's server, as ./server.ts answers it. */
export type SessionToolCall = (request: CallToolRequest, extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => Promise<CallToolResult>;

/** Installed on a 2025-era session's server before it connects: its capabilities and handlers, around the session's plain tools/call. */
export interface SessionServerExtension {
  /** `view`: the session's at each request (a person's follows their latest token). */
  install(server: Server, session: ClientSession, view: () => SessionView, plainCall: SessionToolCall): void;
}

export const TASK_STATUSES = ["working", "input_required", "completed", "failed", "cancelled"] as const;

/** What the hub's tools read of a task (hub/tasks/store.ts Task is one). */
export interface TaskView {
  readonly id: string;
  readonly tool: string;
  readonly status: (typeof TASK_STATUSES)[number];
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly statusMessage?: string;
  readonly inputRequests?: Record<string, unknown>;
  readonly terminal: boolean;
  /** tasks/cancel: the call ends with its child's process tree; a task that already ended stays as it ended. */
  cancel(by?: string): void;
}

/** The hub's tasks, by tenant (hub/tasks/store.ts TaskStore is one). */
export interface TenantTasks {
  of(tenant: string): readonly TaskView[];
}
