// The page's link to the hub: the API key (kept in sessionStorage, so it lives as long as the tab),
// the status JSON at GET /, and a real MCP client on /mcp whose every message is shown in the log.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";

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
export type Tap = (direction: Direction, message: JSONRPCMessage) => void;

/** Passes everything through to the real transport and shows each message to `tap` first. */
class TappedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(
    readonly inner: StreamableHTTPClientTransport,
    private readonly tap: Tap,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      this.tap("in", message);
      this.onmessage?.(message, extra);
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.tap("out", message);
    await this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface Connection {
  client: Client;
  sessionId?: string;
  close(): Promise<void>;
}

/** @param query the session's tool selection, "?servers=…&tools=…&catalog=search" or "" */
export async function connect(tap: Tap, onError: (error: Error) => void, query = ""): Promise<Connection> {
  const endpoint = hubUrl(`mcp${query}`);
  const inner = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: authHeaders() } });
  const transport = new TappedTransport(inner, tap);
  // the CfWorker validator needs no eval, which the page's Content-Security-Policy forbids
  const client = new Client({ name: "agentbox-playground", version: "1.0.0" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  client.onerror = onError;
  try {
    await client.connect(transport);
  } catch (err) {
    if ((err as { code?: number }).code === 401) throw new Unauthorized((err as Error).message);
    throw err;
  }
  const sessionId = inner.sessionId;
  // a closing tab frees its session (terminals, browser tabs) at once instead of at the idle timeout
  const onHide = () => {
    if (!sessionId) return;
    void fetch(endpoint, { method: "DELETE", keepalive: true, headers: { "Mcp-Session-Id": sessionId, ...authHeaders() } });
  };
  window.addEventListener("pagehide", onHide);
  return {
    client,
    sessionId,
    async close() {
      window.removeEventListener("pagehide", onHide);
      await inner.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}
