// Previews: a URL under the hub's own address that opens an app a tenant's process serves on a
// port inside the container. The token in the URL is the only credential (a browser sends no
// header), so previews are served before the hub's own checks; every request is then checked
// again against the kernel's socket table: the port must still be the tenant's.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { PreviewConfig } from "../config/previews.js";
import { cookieJar } from "./cookies.js";
import { CheckedAgent } from "./checked-connection.js";
import { PortAccessCheck, type PortAccess } from "./port-access.js";
import { pathToApp, toApp, type Forwarding } from "./headers.js";
import { hostHeaderOf, PreviewProxy, uncheckedPort, type ProxyTarget } from "./proxy.js";
import { PreviewStore, type Preview } from "./store.js";
import { isUnderDomain, newToken, secretOf, tokenOfHost, tokenOfPath } from "./token.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import type { Clock } from "../protocol/clock.js";

export type { Preview } from "./store.js";
export type { Forwarding } from "./headers.js";

/** A preview as the tool shows it. */
export interface OpenPreview extends Preview {
  url: string;
  subdomainUrl?: string;
}

export interface PreviewRequest {
  tenant: string;
  uid: number;
  session: string;
  port: number;
  ttlSeconds?: number;
}

// one tab of a dev server holds a few connections (its page, hot reload, an event stream); this
// bounds what one preview's visitors may hold open in the hub
const EXCHANGES_PER_PREVIEW = 256;

const REFUSALS: Record<Exclude<PortAccess, { ok: true }>["why"], (port: number) => string> = {
  "nothing listens": (port) => `nothing of yours listens on port ${port}. Start the app on 127.0.0.1:${port} first (in a terminal), then ask again.`,
  "another user's": (port) =>
    `port ${port} is held by a process that is not yours (another tenant, or the system). Start your app on 127.0.0.1 on another port, then ask again.`,
  "the hub's own": (port) => `port ${port} is the hub's own. Start your app on 127.0.0.1 on another port, then ask again.`,
};

/** A plain-text answer, on a response or on the raw socket of an upgrade (then closed); also live views' (hub/live/). */
export function page(res: ServerResponse | Duplex, status: number, text: string, headers: Record<string, string> = {}): void {
  const head = { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", ...headers };
  if ("writeHead" in res) {
    res.writeHead(status, head);
    res.end(text + "\n");
    return;
  }
  // an upgrade that goes nowhere: a plain HTTP answer on the raw socket, then close it
  const lines = Object.entries({ ...head, Connection: "close", "Content-Length": String(Buffer.byteLength(text + "\n")) }).map(([k, v]) => `${k}: ${v}`);
  res.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n${lines.join("\r\n")}\r\n\r\n${text}\n`);
}

/** A live preview a request names; `rest` is the path after `/preview/<token>` in the path form. */
interface Found {
  preview: Preview;
  rest?: string;
}

export class Previews {
  private readonly store: PreviewStore;
  private readonly access: PortAccessCheck;
  private readonly proxy = new PreviewProxy();
  private readonly urls = new Map<string, { url: string; subdomainUrl?: string }>();
  /** What each live preview's visitors hold open, to cut when it ends. */
  private readonly exchanges = new Map<string, Set<{ destroy(): void }>>();
  /** Each live preview's connections to its app, to the socket last checked. */
  private readonly agents = new Map<string, CheckedAgent>();

  constructor(
    readonly config: PreviewConfig,
    private readonly replica: string | undefined,
    /** The hub's own address, for a tool called where no request names one (stdio). */
    private readonly fallbackBase: () => string,
    /** Where a live token is known, so nothing the hub writes down shows it (hub/observability/minted-secrets.ts). */
    private readonly secrets: MintedSecrets,
    /** When previews are made and expire. */
    private readonly clock: Clock,
    /** Who listens on a previewed port (a test gives one whose reads of the socket tables fail). */
    access?: PortAccessCheck,
  ) {
    this.store = new PreviewStore((preview) => this.ended(preview), clock);
    this.access = access ?? new PortAccessCheck(clock);
  }

  /** A new preview, or why not (a sentence for the model). */
  /** `requestBase`: the address the asking request used (./public-address.ts), for its URLs when the hub has no public URL. */
  async open(request: PreviewRequest, requestBase?: string): Promise<OpenPreview | string> {
    const { maxTtlSeconds, ttlSeconds: defaultTtl, perTenant } = this.config;
    const ttl = request.ttlSeconds ?? defaultTtl;
    if (ttl > maxTtlSeconds) return `ttlSeconds ${ttl} is longer than this hub allows (${maxTtlSeconds} s, AGENTBOX_PREVIEW_MAX_TTL_SECONDS); ask for less.`;
    const access = await this.access.check(request.port, request.uid, true);
    if (!access.ok) return `Cannot preview port ${request.port}: ${REFUSALS[access.why](request.port)}`;
    if (this.store.count(request.tenant) >= perTenant) {
      return `You have ${perTenant} open previews, the most this hub allows (AGENTBOX_PREVIEWS_PER_TENANT); end one with hub_end_preview first.`;
    }
    const now = this.clock.now();
    const preview: Preview = { ...request, token: newToken(this.replica), createdAt: new Date(now), expiresAt: new Date(now + ttl * 1000) };
    this.urls.set(preview.token, this.addresses(preview, requestBase));
    this.secrets.remember(preview.token, secretOf(preview.token));
    this.store.add(preview);
    return this.describe(preview);
  }

  private addresses(preview: Preview, requestBase: string | undefined): { url: string; subdomainUrl?: string } {
    const base = this.baseUrl(requestBase);
    const path = base.pathname.replace(/\/$/, "");
    const url = `${base.origin}${path}/preview/${preview.token}/`;
    if (!this.config.domain) return { url };
    return { url, subdomainUrl: `${base.protocol}//${preview.port}-${preview.token}.${this.config.domain}${base.port ? `:${base.port}` : ""}/` };
  }

  /** The address links under the hub's own are made with: the public URL, else the one the caller used (`requestBase`). */
  baseUrl(requestBase?: string): URL {
    try {
      return new URL(this.config.publicUrl ?? requestBase ?? this.fallbackBase());
    } catch {
      return new URL(this.fallbackBase()); // a Host header that makes no URL
    }
  }

  private describe(preview: Preview): OpenPreview {
    return { ...preview, ...this.urls.get(preview.token)! };
  }

  /** End a preview of this tenant named by its token or any of its URLs; false when it names none of the tenant's live ones. */
  end(tenant: string, tokenOrUrl: string): OpenPreview | undefined {
    const token = this.tokenIn(tokenOrUrl);
    const found = token ? this.store.lookup(token) : undefined;
    if (!found || !("preview" in found) || found.preview.tenant !== tenant) return undefined;
    const described = this.describe(found.preview);
    this.store.end(found.preview.token, "revoked");
    return described;
  }

  private tokenIn(text: string): string | undefined {
    const value = text.trim();
    if (!value.includes("/") && !value.includes(".")) return value.toLowerCase();
    try {
      const url = new URL(value);
      return tokenOfPath(url.pathname)?.token ?? tokenOfHost(url.host, this.config.domain)?.token;
    } catch {
      return undefined;
    }
  }

  list(filter: { tenant?: string; session?: string }): OpenPreview[] {
    return this.store.list(filter).map((p) => this.describe(p));
  }

  endSession(session: string): void {
    this.store.endAll({ session }, "session ended");
  }

  stop(): void {
    this.store.endAll({}, "hub stopped");
  }

  private ended(preview: Preview): void {
    this.urls.delete(preview.token);
    this.secrets.forget(preview.token);
    for (const exchange of this.exchanges.get(preview.token) ?? []) exchange.destroy();
    this.exchanges.delete(preview.token);
    this.agents.get(preview.token)?.destroy();
    this.agents.delete(preview.token);
  }

  /** The preview's connections to the socket the check chose; a new set when it chose another. */
  private agentFor(preview: Preview, access: Extract<PortAccess, { ok: true }>): CheckedAgent {
    const kept = this.agents.get(preview.token);
    if (kept && kept.host === access.host && kept.inode === access.inode) return kept;
    kept?.retire();
    const { port, uid } = preview;
    const agent = new CheckedAgent(access.host, port, access.inode, () => this.access.stillListens(port, uid, access.inode));
    this.agents.set(preview.token, agent);
    return agent;
  }

  /** Whether a request is for a preview: its path is `/preview/…` or its Host a name under the preview domain. */
  claims(rawUrl: string | undefined, host: string | undefined): boolean {
    return (rawUrl ?? "").startsWith("/preview/") || (isUnderDomain(host, this.config.domain) && tokenOfHost(host, this.config.domain) !== undefined);
  }

  serveHttp(req: IncomingMessage, res: ServerResponse, via: Omit<Forwarding, "prefix">): void {
    const found = this.find(req, res);
    if (!found) return;
    if (!this.hold(found.preview, res)) return page(res, 503, "This preview has too many open connections; close some tabs and try again.");
    this.route(req, res, via, found).then(
      (target) => target && this.proxy.web(req, res, target),
      (err: unknown) => this.unchecked(res, err),
    );
  }

  serveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, via: Omit<Forwarding, "prefix">): void {
    const found = this.claims(req.url, req.headers.host) ? this.find(req, socket) : undefined;
    if (!found) {
      if (!socket.destroyed && socket.writable && !this.claims(req.url, req.headers.host)) page(socket, 404, "Nothing here takes a WebSocket.");
      return;
    }
    if (!this.hold(found.preview, socket)) return page(socket, 503, "This preview has too many open connections.");
    this.route(req, socket, via, found).then(
      (target) => target && this.proxy.ws(req, socket, head, target),
      (err: unknown) => this.unchecked(socket, err),
    );
  }

  private unchecked(res: ServerResponse | Duplex, err: unknown): void {
    if (!res.destroyed) page(res, 502, uncheckedPort(err instanceof Error ? err.message : String(err)));
  }

  /** Count an exchange against its preview until it closes; false when the preview holds too many. */
  private hold(preview: Preview, exchange: ServerResponse | Duplex): boolean {
    let open = this.exchanges.get(preview.token);
    if (!open) this.exchanges.set(preview.token, (open = new Set()));
    if (open.size >= EXCHANGES_PER_PREVIEW) return false;
    const entry = { destroy: () => exchange.destroy() };
    open.add(entry);
    exchange.once("close", () => open.delete(entry));
    return true;
  }

  /** The live preview a request names, or undefined once the refusal (or the redirect to its slash) is written. */
  private find(req: IncomingMessage, res: ServerResponse | Duplex): Found | undefined {
    const byHost = tokenOfHost(req.headers.host, this.config.domain);
    const rawUrl = req.url ?? "/";
    const byPath = byHost ? undefined : tokenOfPath(rawUrl.split("?")[0]);
    const token = byHost?.token ?? byPath?.token;
    const found = token ? this.store.lookup(token) : undefined;
    if (!found) {
      page(res, 404, "Preview not found: this URL names no preview. Ask the agent for a new one (hub_preview).");
      return undefined;
    }
    if ("ended" in found) {
      page(res, 410, `This preview has ended (${found.ended}). Ask the agent for a new one (hub_preview).`);
      return undefined;
    }
    const { preview } = found;
    if (byHost && byHost.port !== preview.port) {
      page(res, 404, "Preview not found: this URL names no preview. Ask the agent for a new one (hub_preview).");
      return undefined;
    }
    if (byPath && byPath.rest === undefined) {
      // relative links of the app's pages resolve under the prefix only with the slash
      const query = rawUrl.includes("?") ? rawUrl.slice(rawUrl.indexOf("?")) : "";
      page(res, 308, "Moved.", { Location: `/preview/${preview.token}/${query}` });
      return undefined;
    }
    return { preview, rest: byPath?.rest };
  }

  /**
   * Where a found preview's request goes, with its URL and headers rewritten for the app; or
   * undefined once the refusal is written, or when the exchange ended while the port was checked
   * (the visitor left, or the preview ended and cut it).
   */
  private async route(
    req: IncomingMessage,
    res: ServerResponse | Duplex,
    via: Omit<Forwarding, "prefix">,
    { preview, rest }: Found,
  ): Promise<ProxyTarget | undefined> {
    const access = await this.access.check(preview.port, preview.uid);
    if (res.destroyed) return undefined;
    if (!access.ok) {
      page(res, 502, `The app of this preview is not running: nothing of its owner listens on port ${preview.port} now. Ask the agent to start it again.`);
      return undefined;
    }
    const prefix = rest !== undefined ? `/preview/${preview.token}` : undefined;
    const target = { host: access.host, port: preview.port, jar: cookieJar(preview.token), prefix, agent: this.agentFor(preview, access) };
    const rawUrl = req.url ?? "/";
    const query = rawUrl.includes("?") ? rawUrl.slice(rawUrl.indexOf("?")) : "";
    req.url = pathToApp(rest !== undefined ? `${rest}${query}` : rawUrl);
    req.headers = { ...toApp(req.headers, { ...via, prefix }, target.jar), host: hostHeaderOf(target) };
    return target;
  }
}
