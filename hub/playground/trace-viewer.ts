// GET /trace-viewer/…: Playwright's trace viewer, as playwright-core ships it (lib/vite/traceViewer),
// so a browser recording (a Playwright trace) replays in the page: /trace-viewer/index.html?trace=<its
// download URL>. The viewer is static files and holds no data: served before the key check, like the
// playground. The files are listed once at start and only those names are served, so no path reaches
// anything else. The viewer's service worker is scoped to /trace-viewer/ and renders a trace's DOM
// snapshots with scripts off (its own Content-Security-Policy), so a recorded page runs nothing.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import type { Env, Hono } from "hono";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".ttf": "font/ttf",
  ".webmanifest": "application/manifest+json",
  ".png": "image/png",
};

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
    return entry.isFile() && TYPES[path.extname(entry.name)] ? [name] : [];
  });
}

export function mountTraceViewer<E extends Env>(app: Hono<E>, dir = viewerDir()): void {
  const files = new Set(dir ? filesUnder(dir) : []);
  app.get("/trace-viewer", (c) => c.redirect("/trace-viewer/index.html", 302));
  app.get("/trace-viewer/*", async (c) => {
    const name = c.req.path.slice("/trace-viewer/".length) || "index.html";
    if (!dir || !files.has(name))
      return c.text(dir ? `No trace viewer file '${name.slice(0, 200)}'.` : "This install has no trace viewer (playwright-core's lib/vite/traceViewer).", 404);
    const body = await fs.promises.readFile(path.join(dir, name));
    return c.body(body, 200, {
      "Content-Type": TYPES[path.extname(name)]!,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-cache",
      "Referrer-Policy": "no-referrer",
    });
  });
}
