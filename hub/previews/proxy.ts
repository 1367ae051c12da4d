// The preview proxy: HTTP (streamed both ways, so SSE events pass as the app writes them) and
// WebSocket upgrades, through http-proxy-3, over connections the caller's agent checks. Every
// exchange in flight is counted against its preview and cut when the preview ends.
import type { Agent, ClientRequest, IncomingMessage, ServerResponse } from "node:http";
import { isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createProxyServer } from "http-proxy-3";
import { PortChangedHands, PortUnchecked } from "./checked-connection.js";
import { fromApp } from "./headers.js";

/** Where one request goes: the app's address, its preview's cookie jar, and the path-form prefix to mend its replies for. */
export interface ProxyTarget {
  host: string;
  port: number;
  jar: string;
  prefix?: string;
  /** Connections to the app, each checked to be its owner's. */
  agent: Agent;
}

const TARGET = Symbol("agentbox.previewTarget");
// set once the app answered a WebSocket's upgrade: from then on the client has the app's answer
const ANSWERED = Symbol("agentbox.previewAnswered");
type Tagged = IncomingMessage & { [TARGET]?: ProxyTarget; [ANSWERED]?: boolean };

export const hostHeaderOf = (t: { host: string; port: number }) => `${isIP(t.host) === 6 ? `[${t.host}]` : t.host}:${t.port}`;

const mend = (req: IncomingMessage, res: IncomingMessage) => {
  const target = (req as Tagged)[TARGET];
  if (target) fromApp(res.headers, target.jar, target.prefix);
};

export class PreviewProxy {
  private readonly proxy = createProxyServer({ xfwd: false, ws: true, changeOrigin: false });

  constructor() {
    this.proxy.on("proxyRes", (proxyRes, req) => mend(req, proxyRes));
    // a WebSocket's answer (its 101, or a refusal) may set cookies too: mended before the library
    // writes its headers to the client, which it does in listeners of its own added after this event
    this.proxy.on("proxyReqWs", (proxyReq: ClientRequest, req: IncomingMessage) => {
      const answered = (proxyRes: IncomingMessage) => {
        (req as Tagged)[ANSWERED] = true;
        mend(req, proxyRes);
      };
      proxyReq.prependListener("upgrade", answered);
      proxyReq.prependListener("response", answered);
    });
    // http-proxy-3 re-emits a WebSocket client's socket errors (a reset, a write to a client that
    // left) here, and throws them when nothing listens: they end that one exchange, not the hub
    this.proxy.on("error", (_err, _req, res) => res?.destroy());
  }

  web(req: IncomingMessage, res: ServerResponse, target: ProxyTarget): void {
    (req as Tagged)[TARGET] = target;
    const failed = (err: Error) => {
      if (res.headersSent) return void res.destroy(err);
      res.writeHead(502, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" });
      res.end(notAnswered(err));
    };
    this.proxy.web(req, res, { target: `http://${hostHeaderOf(target)}`, agent: target.agent }, failed);
  }

  ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: ProxyTarget): void {
    (req as Tagged)[TARGET] = target;
    const failed = (err: Error) => {
      // the app could not be reached (it ended between the port check and now): say so, as web() does
      if ((req as Tagged)[ANSWERED] || socket.destroyed || !socket.writable) return void socket.destroy();
      const text = notAnswered(err);
      socket.end(
        `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n` +
          `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
      );
    };
    this.proxy.ws(req, socket as Socket, head, { target: `http://${hostHeaderOf(target)}`, agent: target.agent }, failed);
  }
}

const notAnswered = (err: Error) =>
  err instanceof PortChangedHands
    ? `The app of this preview is not running: ${err.message}. Ask the agent to start it again.\n`
    : err instanceof PortUnchecked
      ? `${uncheckedPort(err.message)}\n`
      : `The previewed app did not answer (${(err as NodeJS.ErrnoException).code ?? "error"}): is it still running?\n`;

/** What a visitor is told when the hub could not read who listens on the app's port: it sent nothing. */
export const uncheckedPort = (why: string) => `The hub could not check who listens on the app's port (${why}); try again.`;
