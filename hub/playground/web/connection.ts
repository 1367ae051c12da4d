// The page's link to the hub: the API key (kept in sessionStorage, so it lives as long as the tab),
// the status JSON at GET /, and a real MCP client on /mcp whose every message is shown in the log.
// The client is the SDK v2's: in "auto" mode it finds the hub speaks 2026-07-28 and uses it (no
// session: every request carries its envelope); in "legacy" mode it runs the 2025 initialize
// handshake and gets a session, as 2025 clients do.
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  LOG_LEVEL_META_KEY,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { TaskCalls, TASKS_EXTENSION, type TaskEvents } from "./task-calls.js";

const KEY_STORAGE = "agentbox.apiKey";

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

function authHeaders(): Record<string, string> {
  const key = apiKey.get();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

/** The hub answered 401: the page needs (another) API key. */
export class Unauthorized extends Error {}

export interface ServerStatus {
  name: string;
  prefix: string;
  transport?: string;
  state: string;
  pid: number | null;
  restarts: number;
  tools: number;
  lastError?: string;
}

export interface HubStatus {
  name: string;
  version: string;
  uptimeSeconds: number;
  sessions?: number;
  servers: ServerStatus[];
}

// Relative to the page, so the playground also works behind a proxy that mounts the hub on a path.
const hubUrl = (path: string) => new URL(path, new URL("./", location.href));

export async function fetchStatus(): Promise<HubStatus> {
  const res = await fetch(hubUrl("./"), { headers: { Accept: "application/json", ...authHeaders() } });
  if (res.status === 401) throw new Unauthorized(await errorText(res));
  if (!res.ok) throw new Error(`GET / answered ${res.status}: ${await errorText(res)}`);
  return (await res.json()) as HubStatus;
}

async function errorText(res: Response): Promise<string> {
  const body = await res.text();
  try {
    const json = JSON.parse(body);
    return json?.error?.message ?? json?.error ?? body;
  } catch {
    return body || res.statusText;
  }
}

export type Direction = "out" | "in";

/** What the connection tells the page: each message on the wire, a note of its own, a transport error, a changed tool list, its calls' tasks. */
export interface ConnectionEvents {
  tap(direction: Direction, message: JSONRPCMessage): void;
  note(text: string): void;
  onError(error: Error): void;
  onToolsChanged(): void;
  tasks: TaskEvents;
  /** Whether a call of this tool should declare the tasks extension (the person ticked "Run as a task"). */
  runsAsTask(tool: string): boolean;
}

/** The SDK's version negotiation modes the page offers: "auto" finds 2026-07-28 on this hub, "legacy" is the 2025 handshake. */
export const MODES = ["auto", "legacy"] as const;
export type Mode = (typeof MODES)[number];

/** The page's mode, from its URL (?protocol=legacy); auto unless it says otherwise. */
export function modeOf(search: string = location.search): Mode {
  return new URLSearchParams(search).get("protocol") === "legacy" ? "legacy" : "auto";
}

/** Passes everything through to the real transport and shows each message to the page first. */
class TappedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** The page's calls that the hub runs as tasks (2026-07-28), which the SDK client leaves to the page. */
  private readonly tasks: TaskCalls;

  constructor(
    readonly inner: StreamableHTTPClientTransport,
    private readonly events: ConnectionEvents,
  ) {
    this.tasks = new TaskCalls(
      (message) => this.send(message),
      (message) => this.onmessage?.(message),
      events.tasks,
    );
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** 2026-07-28 cancels a request by closing its stream, which the client does only on a transport that says it can. */
  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      this.events.tap("in", message);
      if (!this.tasks.incoming(message)) this.onmessage?.(message, extra);
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }

  async send(sent: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const message = this.declaringTasks(sent);
    this.events.tap("out", message);
    this.tasks.outgoing(message, options?.requestSignal);
    // a 2026 cancellation sends nothing: the log says the request's stream was closed instead
    const id = (message as { id?: string | number }).id;
    options?.requestSignal?.addEventListener("abort", () => this.events.note(`closed the stream of request #${String(id)}: its cancellation in 2026-07-28`), {
      once: true,
    });
    await this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * A 2026 tools/call the person asked to run as a task, its envelope declaring the tasks extension
   * and form elicitation.
   * Per call, not in the client's capabilities: a task's call hears no progress, so a tool run the
   * usual way keeps its live output (terminal_exec streams what it prints).
   */
  private declaringTasks(message: JSONRPCMessage): JSONRPCMessage {
    const m = message as { method?: string; params?: { name?: unknown; _meta?: Record<string, unknown> } };
    const capabilities = m.params?._meta?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
    if (m.method !== "tools/call" || !capabilities || !this.events.runsAsTask(String(m.params?.name))) return message;
    // a task's child may ask, and the page answers that in a form (./task-questions.ts): only a call run as a
    // task can be asked, so a plain call's server hears the page cannot answer and says so, instead of asking into the void
    const declared = { ...capabilities, elicitation: { form: {} }, extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} } };
    return { ...message, params: { ...m.params, _meta: { ...m.params!._meta, [CLIENT_CAPABILITIES_META_KEY]: declared } } } as JSONRPCMessage;
  }
}

export interface Connection {
  client: Client;
  /** A 2025 session's id; a 2026-07-28 connection has none. */
  sessionId?: string;
  era: "modern" | "legacy";
  protocolVersion: string;
  /**
   * What a call's _meta carries so the tools' log lines reach the page: in 2026-07-28 a request
   * hears log lines only at the level its own envelope asks for (none when it names none); a 2025
   * session that never set a level hears them all.
   */
  callMeta: Record<string, unknown> | undefined;
  close(): Promise<void>;
}

/**
 * @param query the connection's tool selection, "?servers=…&tools=…&catalog=search" or ""
 * @param mode "auto" (2026-07-28 on this hub) or "legacy" (the 2025 handshake)
 */
export async function connect(events: ConnectionEvents, query = "", mode: Mode = "auto"): Promise<Connection> {
  const endpoint = hubUrl(`mcp${query}`);
  const inner = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: authHeaders() } });
  const transport = new TappedTransport(inner, events);
  // the CfWorker validator needs no eval, which the page's Content-Security-Policy forbids
  const client = new Client(
    { name: "agentbox-playground", version: "1.0.0" },
    {
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      versionNegotiation: { mode },
      // 2025: the hub's unsolicited list_changed; 2026: a subscriptions/listen stream the client opens for it
      listChanged: { tools: { autoRefresh: false, onChanged: () => events.onToolsChanged() } },
    },
  );
  client.onerror = (error) => events.onError(error);
  try {
    await client.connect(transport);
  } catch (err) {
    if (err instanceof SdkHttpError && err.status === 401) throw new Unauthorized(err.message);
    throw err;
  }
  const sessionId = inner.sessionId;
  const era = client.getProtocolEra() ?? "legacy";
  // a closing tab frees its session (terminals, browser tabs) at once instead of at the idle timeout
  const onHide = () => {
    if (!sessionId) return;
    void fetch(endpoint, { method: "DELETE", keepalive: true, headers: { "Mcp-Session-Id": sessionId, ...authHeaders() } });
  };
  window.addEventListener("pagehide", onHide);
  return {
    client,
    sessionId,
    era,
    protocolVersion: client.getNegotiatedProtocolVersion() ?? "unknown",
    callMeta: era === "modern" ? { [LOG_LEVEL_META_KEY]: "debug" } : undefined,
    async close() {
      window.removeEventListener("pagehide", onHide);
      if (sessionId) await inner.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}
