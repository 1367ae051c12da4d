// GET /trace-viewer/…: Playwright's trace viewer, as playwright-core ships it (lib/vite/traceViewer),
// so a browser recording (a Playwright trace) replays in the page: /trace-viewer/index.html?trace=<its
// download URL>. The viewer is static files and holds no data: served before the key check, like the
// playground. The files are listed once at start and only those names are served, so no path reaches
// anything else; UI mode's page (uiMode.*, for `playwright test --ui`, which talks to a test server
// its URL names) is not served. A trace is the agent's to shape, so the viewer's pages come with a
// Content-Security-Policy that lets their frames load only the viewer's own snapshots, and its
// service worker with code that adds the same rule to every snapshot it draws (./trace-viewer-sw.ts).
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import type { Context, Env, Hono } from "hono";
import { SNAPSHOT_HARDENING } from "./trace-viewer-sw.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".ttf": "font/ttf",
  ".webmanifest": "application/manifest+json",
  ".png": "image/png",
};

const SERVICE_WORKER = "sw.bundle.js";
// a scheme-less host the browser could have sent: a name or an IP literal, and a port
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** playwright-core's bundled viewer, or undefined when this install has none. */
function viewerDir(): string | undefined {
  try {
    const core = path.dirname(createRequire(import.meta.url).resolve("playwright-core/package.json"));
    const dir = path.join(core, "lib", "vite", "traceViewer");
    return fs.statSync(path.join(dir, "index.html")).isFile() ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Every file under dir (relative names, forward slashes), links not followed. */
function filesUnder(dir: string, prefix = ""): string[] {
  return fs.readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const name = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return filesUnder(dir, name);
    return entry.isFile() && TYPES[path.extname(entry.name)] && !entry.name.startsWith("uiMode.") ? [name] : [];
  });
}

/** CSP hashes of a page's inline scripts (index.html has one, which tells a file:// reader what to do). */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`);
}

/**
 * The policy of the viewer's pages: scripts only its own, and frames only its snapshots, at the
 * origin the browser used (`scheme://host`; a host that is none gets none), or its blank data: page
 * for an action without one (a data: page takes the policy of the page that opened it).
 */
export function viewerPolicy(origin: string | undefined, scriptHashes: string[] = []): string {
  const url = origin?.match(/^(https?):\/\/(.+)$/);
  const frames = url && HOST.test(url[2]!) ? `${url[1]}://${url[2]}/trace-viewer/snapshot/ data:` : "data:";
  const scripts = `script-src 'self' ${scriptHashes.join(" ")}`.trimEnd();
  return [scripts, "object-src 'none'", "base-uri 'none'", "form-action 'none'", `frame-src ${frames}`].join("; ");
}

export interface TraceViewerOptions<E extends Env> {
  /** The origin the browser used for this request (`http://host:port`), as a trusted proxy tells it. */
  originOf: (c: Context<E>) => string | undefined;
  /** The viewer's files (default: playwright-core's). */
  dir?: string;
}

export function mountTraceViewer<E extends Env>(app: Hono<E>, { originOf, dir = viewerDir() }: TraceViewerOptions<E>): void {
  const files = new Set(dir ? filesUnder(dir) : []);
  const hashes = new Map([...files].filter((f) => f.endsWith(".html")).map((f) => [f, inlineScriptHashes(fs.readFileSync(path.join(dir!, f), "utf8"))]));
  app.get("/trace-viewer", (c) => c.redirect("/trace-viewer/index.html", 302));
  app.get("/trace-viewer/*", async (c) => {
    const name = c.req.path.slice("/trace-viewer/".length) || "index.html";
    if (!dir || !files.has(name))
      return c.text(dir ? `No trace viewer file '${name.slice(0, 200)}'.` : "This install has no trace viewer (playwright-core's lib/vite/traceViewer).", 404);
    const file = await fs.promises.readFile(path.join(dir, name));
    const body = name === SERVICE_WORKER ? Buffer.concat([Buffer.from(SNAPSHOT_HARDENING), file]) : file;
    const headers: Record<string, string> = {
      "Content-Type": TYPES[path.extname(name)]!,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-cache",
      "Referrer-Policy": "no-referrer",
    };
    const pageScripts = hashes.get(name);
    if (pageScripts) headers["Content-Security-Policy"] = viewerPolicy(originOf(c), pageScripts);
    return c.body(body, 200, headers);
  });
}
