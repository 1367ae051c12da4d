// The hub tells every child when a client session ends with this notification.
export const SESSION_CLOSED_METHOD = "notifications/agentbox/session_closed";
/** The _meta key carrying the client session id on every call the hub forwards. */
export const SESSION_META_KEY = "agentbox/session";
/**
 * The _meta key naming the hub's call a request belongs to, on every call the hub forwards. A child
 * echoes it (with the session) on each question and log line it sends during that call, so the hub
 * hands them to that call's client and no other (several clients' calls can be in flight at once).
 */
export const CALL_META_KEY = "agentbox/call";
/** The _meta key carrying the session's callback token to the spawned servers that ask for it (SESSION_CALLBACK_CAPABILITY). */
export const TOKEN_META_KEY = "agentbox/token";
/**
 * The _meta key on a child's question (elicitation/create, sampling/createMessage, roots/list)
 * naming the inputRequests key a 2026-07-28 caller should see it under, as a 2026 server would
 * choose it. A hint for the hub, which keys the question by it (and drops it) when it turns the
 * question into input_required.
 */
export const INPUT_KEY_META_KEY = "agentbox/inputKey";
/**
 * The _meta key (value `true`) by which a client says a call is its own bookkeeping, such as the
 * playground filling its side panels: the hub keeps such a call of one of its read-only tools out of
 * the audit trail (hub/sessions/call-records.ts) and only counts it. Any other call stays in it, marked or not.
 */
export const BOOKKEEPING_META_KEY = "agentbox/bookkeeping";
/** The _meta key of a rate-limited result: milliseconds until the call may be retried. */
export const RETRY_AFTER_META_KEY = "agentbox/retryAfterMs";
/**
 * A tool's `_meta` key in a 2026-07-28 tools/list: how it may run as a task (optional, required,
 * forbidden), which that revision's listing has no execution.taskSupport to say.
 */
export const TASK_SUPPORT_META_KEY = "agentbox/taskSupport";
/** What a child echoes of a call's _meta on the requests and log lines it sends during that call: the session and the call the hub named. */
export function attributionOf(meta: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [SESSION_META_KEY, CALL_META_KEY]) {
    const value = meta?.[key];
    if (typeof value === "string") out[key] = value;
  }
  return out;
}
/** Headers code uses to call the hub's tools as its session (the Python and JS bridges send them). */
export const SESSION_TOKEN_HEADER = "x-agentbox-session-token";
/** The environment variable carrying that token into an interpreter. */
export const SESSION_TOKEN_ENV = "AGENTBOX_SESSION_TOKEN";
/** The environment variable naming the header to send it in (the Python bridge reads the name from here). */
export const SESSION_TOKEN_HEADER_ENV = "AGENTBOX_SESSION_TOKEN_HEADER";

/**
 * The capability (under `experimental`) a server declares when it keeps state per client session
 * (terminals, interpreters, browser pages): the hub then offers its tools a `context` argument, so
 * one client can hold several such states (hub/catalog/context-argument.ts).
 */
export const SESSION_STATE_CAPABILITY = "agentbox/sessionState";

/**
 * The capability (under `experimental`) a spawned server declares when what it starts calls the hub
 * back as the session, or carries the session's claim (terminals, interpreters): only such a server
 * is sent the session's callback token (TOKEN_META_KEY), on each request. Others never see it, and
 * do not parse it on every call.
 */
export const SESSION_CALLBACK_CAPABILITY = "agentbox/sessionCallback";

/** The hub asks every child what it holds for a session (hub_sessions) with this request. */
export const DESCRIBE_SESSION_METHOD = "agentbox/describe_session";

type Describer = (session: string) => Promise<unknown> | unknown;
const describers = new Map<string, Describer>();

/** Report what this server holds for a session (tabs, terminals, interpreters) under a name. */
export function registerSessionDescriber(name: string, describer: Describer): void {
  describers.set(name, describer);
}

/** Everything registered describers report for a session; those holding nothing are left out. */
export async function describeSession(session: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, describe] of describers) {
    const value = await Promise.resolve(describe(session)).catch((err) => ({ error: String(err) }));
    if (value !== undefined) out[name] = value;
  }
  return out;
}

type Listener = (session: string) => void | Promise<void>;
const listeners = new Set<Listener>();

export function onSessionClosed(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function emitSessionClosed(session: string): Promise<void> {
  await Promise.allSettled([...listeners].map((l) => l(session)));
}
