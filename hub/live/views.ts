// Live views: a URL under the hub's own address that shows one of a session's browser tabs or
// terminals as it changes, and lets a person take control. The token in the URL is the only
// credential, bound like a preview's (hub/previews/): to the tenant and the session that asked,
// ending when it expires, with the session, or when the hub stops. A view's WebSocket must come
// from a page of the hub's own origin; its streams come from the tenant's own child, over stdio.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { LIVE_OPEN_METHOD, liveInputEvent, MAX_VIEW_SIZE, type LiveOpened } from "../../servers/lib/live.js";
import { errorMessage } from "../../servers/lib/log.js";
import type { PreviewConfig } from "../config/previews.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import { TokenStore, type Ending } from "../previews/store.js";
import { newToken, pathTokens, secretOf } from "../previews/token.js";
import type { Clock } from "../protocol/clock.js";
import { plainAnswer, servePage } from "./page.js";
import { Stream, type LiveChild } from "./stream.js";
import { Viewer } from "./viewer.js";
import { acceptWebSocket, type WebSocketConnection } from "./websocket.js";

export type LiveKind = "browser" | "terminal";

export interface LiveView {
  token: string;
  tenant: string;
  session: string;
  kind: LiveKind;
  tab?: number;
  terminal?: string;
  createdAt: Date;
  expiresAt: Date;
  url: string;
  /** Drawn inside an MCP App (./app-resource.ts): its socket comes from the host's sandbox, whose origin is the host's. */
  embedded?: true;
}

export interface LiveViewRequest {
  tenant: string;
  session: string;
  tab?: number;
  terminal?: string;
  ttlSeconds?: number;
  embedded?: boolean;
}

/** The tenant's child that streams this kind for the session, if it has one running. */
export type LiveChildOf = (tenant: string, session: string, kind: LiveKind) => LiveChild | undefined;

/** Open view tokens per tenant. */
export const VIEWS_PER_TENANT = 64;
/** People watching one tab or terminal at once. */
export const VIEWERS_PER_STREAM = 64;
/** People watching anything of one tenant at once. */
export const VIEWERS_PER_TENANT = 128;

const tokenOfLivePath = pathTokens("live");

export class LiveViews {
  private readonly store: TokenStore<LiveView>;
  private readonly streams = new Map<string, Stream>();
  /** The child's stream name → the stream, per child: an event naming anything else is dropped. */
  private readonly byChild = new Map<LiveChild, Map<string, Stream>>();
  /** Viewers per view token, to close when the view ends; and per tenant, for the cap. */
  private readonly viewers = new Map<string, Set<Viewer>>();

  constructor(
    private readonly config: PreviewConfig,
    private readonly replica: string | undefined,
    private readonly fallbackBase: () => string,
    private readonly secrets: MintedSecrets,
    private readonly childOf: LiveChildOf,
    private readonly clock: Clock,
  ) {
    this.store = new TokenStore<LiveView>((view) => this.ended(view), clock);
  }

  /** A new view, or why not (a sentence for the model). */
  /** `requestBase`: the address the asking request used (hub/previews/public-address.ts), for its URL when the hub has no public URL. */
  open(request: LiveViewRequest, requestBase?: string): LiveView | string {
    const ttl = request.ttlSeconds ?? this.config.ttlSeconds;
    if (ttl > this.config.maxTtlSeconds)
      return `ttlSeconds ${ttl} is longer than this hub allows (${this.config.maxTtlSeconds} s, AGENTBOX_PREVIEW_MAX_TTL_SECONDS); ask for less.`;
    if (this.store.count(request.tenant) >= VIEWS_PER_TENANT)
      return `You have ${VIEWS_PER_TENANT} open live views, the most a tenant may hold; end your session's old ones by closing it, or wait for them to expire.`;
    const kind: LiveKind = request.terminal ? "terminal" : "browser";
    if (!this.childOf(request.tenant, request.session, kind)) return `This hub runs no ${kind} server for you: a live view needs one.`;
    const now = this.clock.now();
    const token = newToken(this.replica);
    const view: LiveView = {
      token,
      tenant: request.tenant,
      session: request.session,
      kind,
      ...(request.terminal ? { terminal: request.terminal } : request.tab !== undefined ? { tab: request.tab } : {}),
      createdAt: new Date(now),
      expiresAt: new Date(now + ttl * 1000),
      url: `${this.base(requestBase)}/live/${token}`,
      ...(request.embedded ? { embedded: true as const } : {}),
    };
    this.secrets.remember(token, secretOf(token));
    this.store.add(view);
    return view;
  }

  /** The hub's address for people: the public URL, else the asking request's, else the listening address. */
  base(requestBase?: string): string {
    let base: URL;
    try {
      base = new URL(this.config.publicUrl ?? requestBase ?? this.fallbackBase());
    } catch {
      base = new URL(this.fallbackBase());
    }
    return `${base.origin}${base.pathname.replace(/\/$/, "")}`;
  }

  endSession(session: string): void {
    this.store.endAll({ session }, "session ended");
  }

  stop(): void {
    this.store.endAll({}, "hub stopped");
  }

  list(filter: { tenant?: string; session?: string }): LiveView[] {
    return this.store.list(filter);
  }

  private ended(view: LiveView): void {
    this.secrets.forget(view.token);
    for (const viewer of this.viewers.get(view.token) ?? []) viewer.socket.close(1000, "view ended");
    this.viewers.delete(view.token);
  }

  claims(rawUrl: string | undefined): boolean {
    return (rawUrl ?? "").startsWith("/live/");
  }

  serveHttp(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0];
    const routed = tokenOfLivePath(path);
    if (!routed) return servePage(res, path.slice("/live/".length));
    const found = this.found(routed.token);
    if (typeof found === "string") return plainAnswer(res, found.startsWith("gone") ? 410 : 404, found.slice(found.indexOf(":") + 2));
    if (routed.rest !== undefined) return plainAnswer(res, 404, "Nothing here: the view is at /live/<token>.");
    servePage(res, "view.html");
  }

  /** The live view a token names, or why not ("missing: …" or "gone: …"). */
  private found(token: string): LiveView | string {
    const found = this.store.lookup(token);
    if (!found) return "missing: Live view not found: this URL names no view. Ask the agent for a new one (hub_live_view).";
    if ("ended" in found) return `gone: This live view has ended (${found.ended satisfies Ending}). Ask the agent for a new one (hub_live_view).`;
    return found.preview;
  }

  /** A view's WebSocket: `/live/<token>/socket`, from a page of the hub's own origin. */
  serveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, origin: string): void {
    const routed = tokenOfLivePath((req.url ?? "/").split("?")[0]);
    const found = routed?.rest === "/socket" ? this.found(routed.token) : "missing: Nothing here takes a WebSocket.";
    if (typeof found === "string") return plainAnswer(socket, found.startsWith("gone") ? 410 : 404, found.slice(found.indexOf(":") + 2));
    if (!found.embedded && req.headers.origin !== origin) return plainAnswer(socket, 403, "A live view's socket opens only from the view's own page.");
    acceptWebSocket(req, socket, head, (connection) => this.connected(found, connection));
  }

  private connected(view: LiveView, socket: WebSocketConnection): void {
    const viewer = new Viewer(socket, view.tenant);
    const refuse = (why: string) => {
      socket.send(JSON.stringify({ type: "closed", why }));
      socket.close(1008, "refused");
    };
    const tenantViewers = [...this.viewers.values()].reduce((n, set) => n + [...set].filter((v) => v.tenant === view.tenant).length, 0);
    if (tenantViewers >= VIEWERS_PER_TENANT)
      return refuse(`Too many people watch this tenant's views (${VIEWERS_PER_TENANT} at most); close some and try again.`);
    let held = this.viewers.get(view.token);
    if (!held) this.viewers.set(view.token, (held = new Set()));
    held.add(viewer);
    let stream: Stream | undefined;
    socket.onclose = () => {
      held.delete(viewer);
      if (!held.size && this.viewers.get(view.token) === held) this.viewers.delete(view.token);
      stream?.leave(viewer);
    };
    socket.onmessage = (data) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch {
        return;
      }
      if (message.type === "hello" && !stream) {
        const size = (value: unknown) => Math.max(16, Math.min(MAX_VIEW_SIZE, Math.round(Number(value)) || 800));
        void this.streamFor(view, size(message.width), size(message.height)).then(
          (s) => {
            if (typeof s === "string") return refuse(s);
            if (!held.has(viewer)) return; // left while the stream opened
            if (s.viewers.size >= VIEWERS_PER_STREAM) return refuse(`Too many people watch this view (${VIEWERS_PER_STREAM} at most); try again later.`);
            stream = s;
            s.join(viewer);
          },
          (err) => refuse(`The view could not open: ${errorMessage(err)}`),
        );
        return;
      }
      if (!stream) return;
      if (message.type === "ack") stream.viewerAcked(viewer);
      else if (message.type === "control") {
        if (!stream.control(viewer, message.take === true)) viewer.status("control", { type: "control", holder: "another person", refused: true });
      } else if (message.type === "input") {
        const event = liveInputEvent.safeParse(message.event);
        if (event.success) stream.input(viewer, event.data);
      }
    };
  }

  /** The running stream for what a view shows, opened by the first viewer (at that viewer's size). */
  private readonly opening = new Map<string, Promise<Stream | string>>();

  private streamFor(view: LiveView, maxWidth: number, maxHeight: number): Promise<Stream | string> {
    const key = `${view.tenant}\n${view.session}\n${view.kind}\n${view.terminal ?? view.tab ?? "current"}`;
    const running = this.streams.get(key);
    if (running) return Promise.resolve(running);
    let opening = this.opening.get(key);
    if (!opening) {
      opening = this.openStream(key, view, maxWidth, maxHeight).finally(() => this.opening.delete(key));
      this.opening.set(key, opening);
    }
    return opening;
  }

  private async openStream(key: string, view: LiveView, maxWidth: number, maxHeight: number): Promise<Stream | string> {
    const child = this.childOf(view.tenant, view.session, view.kind);
    if (!child) return `The ${view.kind} server is not running for this session any more.`;
    const params = {
      session: view.session,
      maxWidth,
      maxHeight,
      ...(view.terminal ? { terminal: view.terminal } : view.tab !== undefined ? { tab: view.tab } : {}),
    };
    const opened = (await child.request(LIVE_OPEN_METHOD, params)) as LiveOpened;
    if (typeof opened?.stream !== "string") return `The ${view.kind} server did not open a stream.`;
    const stream = new Stream(key, opened.stream, child, opened, (s) => this.forget(s, child));
    this.streams.set(key, stream);
    let mine = this.byChild.get(child);
    if (!mine) this.byChild.set(child, (mine = new Map()));
    mine.set(opened.stream, stream);
    stream.start();
    return stream;
  }

  private forget(stream: Stream, child: LiveChild): void {
    if (this.streams.get(stream.key) === stream) this.streams.delete(stream.key);
    const mine = this.byChild.get(child);
    mine?.delete(stream.name);
    if (mine && !mine.size) this.byChild.delete(child);
  }

  /** An event a child sent (notifications/agentbox/live/event): only for a stream of that very child. */
  onEvent(child: LiveChild, params: Record<string, unknown>): void {
    const stream = typeof params.stream === "string" ? this.byChild.get(child)?.get(params.stream) : undefined;
    stream?.event(params);
  }

  /** How many frames wait for each viewer (at most one each): what the tests and the bench look at. */
  backlog(): number[] {
    return [...this.viewers.values()].flatMap((set) => [...set].map((v) => v.queued));
  }
}
