// The preview proxy: HTTP (streamed both ways, so SSE events pass as the app writes them) and
// WebSocket upgrades, through http-proxy-3, to an address the caller checked. Every exchange in
// flight is counted against its preview and cut when the preview ends.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createProxyServer } from "http-proxy-3";
import { fromAppInPathForm } from "./headers.js";

/** Where one request goes: the app's address, and the path-form prefix to mend its replies for. */
export interface ProxyTarget {
  host: string;
  port: number;
  prefix?: string;
}

const PREFIX = Symbol("agentbox.previewPrefix");
type Tagged = IncomingMessage & { [PREFIX]?: string };

export const hostHeaderOf = (t: { host: string; port: number }) => `${isIP(t.host) === 6 ? `[${t.host}]` : t.host}:${t.port}`;

export class PreviewProxy {
  private readonly proxy = createProxyServer({ xfwd: false, ws: true, changeOrigin: false });

  constructor() {
    this.proxy.on("proxyRes", (proxyRes, req) => {
      const prefix = (req as Tagged)[PREFIX];
      if (prefix) fromAppInPathForm(proxyRes.headers, prefix);
    });
    // http-proxy-3 re-emits a WebSocket client's socket errors (a reset, a write to a client that
    // left) here, and throws them when nothing listens: they end that one exchange, not the hub
    this.proxy.on("error", (_err, _req, res) => res?.destroy());
  }

  /** Cookies an app sets are its own: scoped to its prefix in the path form, host-only in both. */
  private options(target: ProxyTarget) {
    return {
      target: `http://${hostHeaderOf(target)}`,
      cookieDomainRewrite: { "*": "" },
      ...(target.prefix ? { cookiePathRewrite: { "*": `${target.prefix}/` } } : {}),
    };
  }

  web(req: IncomingMessage, res: ServerResponse, target: ProxyTarget): void {
    (req as Tagged)[PREFIX] = target.prefix;
    this.proxy.web(req, res, this.options(target), (err) => {
      if (res.headersSent) return void res.destroy(err);
      res.writeHead(502, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" });
      res.end(`The previewed app did not answer (${(err as NodeJS.ErrnoException).code ?? "error"}): is it still running?\n`);
    });
  }

  ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: ProxyTarget): void {
    this.proxy.ws(req, socket as Socket, head, this.options(target), () => socket.destroy());
  }
}
