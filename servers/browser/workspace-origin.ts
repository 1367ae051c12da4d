// Workspace files are shown through a pseudo-origin instead of file: URLs. A file: document may
// load any other file: URL (an <iframe src="file:///etc/passwd"> in a workspace page showed the
// host's files), while an http document may not: Chromium itself refuses file: subresources and
// navigations from it. So workspace pages are http pages of an origin that never resolves
// (.invalid, RFC 6761), fulfilled by a Playwright route from the workspace through the path guard.
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext, Frame, Request, Route } from "playwright-core";
import { mimeTypeOf } from "../file/content.js";
import { ToolError } from "../lib/tool.js";
import { isInside, relativeToWorkspace, resolveInWorkspace } from "../lib/workspace.js";

export const WORKSPACE_ORIGIN = "http://workspace.agentbox.invalid";

/** The pseudo-origin URL of a file: URL inside the workspace; refuses one outside it. */
export function workspaceUrl(workspace: string, fileUrl: string): string {
  const real = resolveInWorkspace(workspace, fileUrl);
  const parsed = new URL(fileUrl);
  const rel = relativeToWorkspace(workspace, real);
  const segments = rel === "." ? [] : rel.split(path.sep).map(encodeURIComponent);
  const slash = fs.statSync(real).isDirectory() && segments.length ? "/" : "";
  return `${WORKSPACE_ORIGIN}/${segments.join("/")}${slash}${parsed.search}${parsed.hash}`;
}

export function isWorkspaceUrl(url: string): boolean {
  return url === WORKSPACE_ORIGIN || url.startsWith(`${WORKSPACE_ORIGIN}/`);
}

/** Serve the workspace origin in this context (called once per BrowserContext). */
export async function serveWorkspace(context: BrowserContext, workspace: string): Promise<void> {
  await context.route(`${WORKSPACE_ORIGIN}/**`, (route) => fulfil(route, workspace));
}

async function fulfil(route: Route, workspace: string): Promise<void> {
  const request = route.request();
  if (!(await fromWorkspace(request))) {
    // A foreign page must not frame or include workspace files (a framed workspace page could
    // read the workspace and postMessage it out).
    await route.fulfill({ status: 403, contentType: "text/plain", body: "Workspace files are only reachable from workspace pages or browser_navigate." });
    return;
  }
  const { pathname } = new URL(request.url());
  let real: string;
  try {
    const decoded = pathname.split("/").map((s) => decodeURIComponent(s)).join("/");
    real = resolveInWorkspace(workspace, `.${decoded}`);
  } catch (err) {
    const message = err instanceof ToolError ? err.message : "Bad path.";
    await route.fulfill({ status: /outside the workspace/.test(message) ? 403 : 404, contentType: "text/plain", body: message });
    return;
  }
  const found = readConfined(workspace, real);
  if (!found) {
    await route.fulfill({ status: 404, contentType: "text/plain", body: "Not found." });
  } else if (found.directory && !pathname.endsWith("/")) {
    // relative links in the listing resolve against the folder only with the trailing slash
    await route.fulfill({ status: 301, headers: { location: `${pathname}/` } });
  } else if (found.directory) {
    await route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: listing(workspace, real) });
  } else {
    await route.fulfill({ status: 200, contentType: mimeTypeOf(real, false), body: found.body });
  }
}

/**
 * Who may load a workspace URL: documents of the workspace origin (their images, scripts, frames),
 * and top-level navigations not started by a foreign page's window.open. A navigation's frame
 * still shows the old document, so a subframe is judged by its parent.
 */
async function fromWorkspace(request: Request): Promise<boolean> {
  let frame: Frame;
  try {
    frame = request.frame();
  } catch {
    return false; // a service worker's request: no document of ours asked for it
  }
  if (!request.isNavigationRequest()) return isWorkspaceUrl(frame.url());
  const parent = frame.parentFrame();
  if (parent) return isWorkspaceUrl(parent.url());
  const opener = await frame.page().opener().catch(() => null);
  return !opener || isWorkspaceUrl(opener.url());
}

/**
 * Read the file the guard approved, confirming through the open descriptor that it is still
 * inside the workspace: a symlink swapped in between the check and the open is caught.
 */
function readConfined(workspace: string, real: string): { directory: boolean; body?: Buffer } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    if (!isInside(workspace, fs.realpathSync(`/proc/self/fd/${fd}`))) return undefined;
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) return { directory: true };
    if (!st.isFile()) return undefined; // FIFOs and devices would block or never end
    return { directory: false, body: fs.readFileSync(fd) };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A plain index of a workspace folder, like the one Chromium shows for a file: folder. */
function listing(workspace: string, dir: string): string {
  const rel = relativeToWorkspace(workspace, dir);
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  const items = entries.map((e) => {
    const name = e.name + (e.isDirectory() ? "/" : "");
    return `<li><a href="${encodeURIComponent(e.name)}${e.isDirectory() ? "/" : ""}">${escapeHtml(name)}</a></li>`;
  });
  const title = escapeHtml(`Index of /${rel === "." ? "" : rel}`);
  return `<!doctype html><meta charset=utf-8><title>${title}</title><h1>${title}</h1><ul>${items.join("")}</ul>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
