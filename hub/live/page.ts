// The view's page and its files (bundled at build time by ./build.ts), served from memory under a
// strict Content-Security-Policy: scripts and styles only from the hub itself, connections only
// back to it (the view's WebSocket), no referrer (the token is in the URL), no cookie. Styles may
// be inline: xterm.js sizes its rows with <style> elements it writes; scripts may not.
import fs from "node:fs";
import type { ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { page } from "../previews/previews.js";

/** Where build.ts writes the bundle: next to this module in dist/. */
export const STATIC_DIR = fileURLToPath(new URL("./static/", import.meta.url));

const FILES: Record<string, string> = {
  "view.html": "text/html; charset=utf-8",
  "view.js": "text/javascript; charset=utf-8",
  "view.css": "text/css; charset=utf-8",
};

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  // the playground's Live panel frames the view; no other site may (a framed "Take over" invites clickjacking)
  "frame-ancestors 'self'",
].join("; ");

const HEADERS = {
  "Content-Security-Policy": CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

let assets: Map<string, Buffer> | undefined;

function load(): Map<string, Buffer> | undefined {
  if (assets) return assets;
  const loaded = new Map<string, Buffer>();
  for (const name of Object.keys(FILES)) {
    try {
      loaded.set(name, fs.readFileSync(`${STATIC_DIR}${name}`));
    } catch {
      return undefined;
    }
  }
  return (assets = loaded);
}

export { page as plainAnswer };

/** One of the view's files; anything else is a 404. */
export function servePage(res: ServerResponse, name: string): void {
  const files = load();
  if (!files) return page(res, 503, "The live view page is not built: run `npm run build`.");
  const body = files.get(name);
  if (!body) return page(res, 404, "Nothing here: a live view's URL is /live/<token>.");
  res.writeHead(200, { "Content-Type": FILES[name], "Content-Length": String(body.length), ...HEADERS });
  res.end(body);
}
