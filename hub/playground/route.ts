// GET /playground: a page that lets a person try every tool of the hub from a browser. The page is
// a real MCP client of the hub's own /mcp (bundled at build time by build.ts); this module only
// serves the prebuilt files, from memory, under a strict Content-Security-Policy because the page
// shows tool results, which are untrusted.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { Context, Env, Hono } from "hono";

/** Where build.ts writes the bundle: next to this module in dist/. */
export const STATIC_DIR = fileURLToPath(new URL("./static/", import.meta.url));

/** The only files served; a fixed table rules out path tricks. */
const FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

// No inline script, no eval, no remote anything: images only from data:/blob: (tool results).
// WebAssembly may compile (asciinema-player's terminal is one), which runs no JavaScript from text.
const CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src data: blob:",
  "connect-src 'self'",
  // the Live panel frames the hub's own /live/<token> pages, nothing else
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "Content-Security-Policy": CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-cache",
};

interface Asset {
  body: Uint8Array;
  type: string;
}

function loadAssets(dir: string): Map<string, Asset> | string {
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(FILES)) {
    try {
      assets.set(name, { body: fs.readFileSync(`${dir}${name}`), type });
    } catch {
      return `The playground is not built (${dir}${name} is missing): run \`npm run build\`.`;
    }
  }
  return assets;
}

export function mountPlayground<E extends Env>(app: Hono<E>, dir: string = STATIC_DIR): void {
  // read once: the files are small and never change while the hub runs
  const assets = loadAssets(dir);
  const send = (c: Context, name: string) => {
    if (typeof assets === "string") return c.json({ error: assets }, 503);
    const asset = assets.get(name);
    if (!asset) return c.json({ error: `No playground asset '${name}'. Assets: ${Object.keys(FILES).join(", ")}.` }, 404);
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": asset.type, ...SECURITY_HEADERS });
  };
  app.get("/playground", (c) => send(c, "index.html"));
  app.get("/playground/", (c) => c.redirect("/playground", 301));
  app.get("/playground/:file", (c) => send(c, c.req.param("file")));
}
