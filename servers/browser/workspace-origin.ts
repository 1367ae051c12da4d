// Workspace files are shown through a pseudo-origin instead of file: URLs. A file: document may
// load any other file: URL (an <iframe src="file:///etc/passwd"> in a workspace page showed the
// host's files), while an http document may not: Chromium itself refuses file: subresources and
// navigations from it. So workspace pages are http pages of an origin that never resolves
// (.invalid, RFC 6761), fulfilled by a Playwright route from the workspace through the path guard.
//
// One origin for every file would make each page able to read all the others (and a page the
// browser downloaded into the workspace could read the workspace and send it away), so every
// response is sandboxed without allow-same-origin: each document gets an opaque origin of its own.
import fs from "node:fs";
import path from "node:path";
import type { BrowserContext, Route } from "playwright-core";
import { mimeTypeOf } from "../lib/mime.js";
import { toolName } from "../lib/names.js";
import { ToolError } from "../lib/tool.js";
import { isInside, relativeToWorkspace, resolveInWorkspace } from "../lib/workspace.js";
import { DOWNLOADS_FOLDER } from "./recorder.js";
import { isWorkspaceUrl, mayLeaveWorkspace, mayLoadWorkspace, onLeavingHeld, WORKSPACE_ORIGIN } from "./workspace-access.js";

export { isWorkspaceUrl, WORKSPACE_ORIGIN } from "./workspace-access.js";

/**
 * The agent's own pages: their scripts, forms (handled by their scripts: form-action 'none') and
 * dialogs work; no allow-same-origin (no reading other files), no allow-popups or
 * allow-top-navigation (no new tabs, frames cannot move the tab), no allow-downloads (a page writes
 * nothing into the workspace). They load only workspace files, inline and data:/blob: resources,
 * and connect nowhere (fetch, XHR, WebSocket, sendBeacon).
 */
const PAGE_POLICY =
  "sandbox allow-scripts allow-forms allow-modals; default-src 'self' data: blob: 'unsafe-inline' 'unsafe-eval'; connect-src 'none'; frame-src 'self'; form-action 'none'; base-uri 'self'";

/** Listings, error messages and downloaded files: shown, never run (no scripts, forms or plugins). */
const INERT_POLICY =
  "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; form-action 'none'; base-uri 'none'";

function headers(policy: string): Record<string, string> {
  return {
    "content-security-policy": policy,
    // Playwright answers a fulfilled cross-origin request with Access-Control-Allow-Origin set to
    // the requester's origin unless the header is present; every workspace document is opaque
    // ("null"), so without this each could fetch any workspace file. Naming the workspace origin,
    // which no document has, grants no one.
    "access-control-allow-origin": WORKSPACE_ORIGIN,
    "x-content-type-options": "nosniff", // a text file is never run as a script or style
    "x-dns-prefetch-control": "off",
    // Speculation rules (<script type="speculationrules">, inline, or built by a script) prefetch and
    // prerender URLs a page writes, and no content security policy governs them: 'unsafe-inline',
    // which the agent's pages need, allows them too. A Connection-Allowlist (Chromium's
    // ConnectionAllowlists, switched on in ./chromium.ts) holds everything a document starts to its
    // own origin, speculation included; Chromium has no switch that turns speculation off.
    "connection-allowlist": "(response-origin)",
    "referrer-policy": "no-referrer", // workspace paths stay out of requests to other sites
  };
}

/** The pseudo-origin URL of a file: URL inside the workspace; refuses one outside it. */
export function workspaceUrl(workspace: string, fileUrl: string): string {
  const real = resolveInWorkspace(workspace, fileUrl);
  const parsed = new URL(fileUrl);
  const rel = relativeToWorkspace(workspace, real);
  const segments = rel === "." ? [] : rel.split(path.sep).map(encodeURIComponent);
  const slash = fs.statSync(real).isDirectory() && segments.length ? "/" : "";
  return `${WORKSPACE_ORIGIN}/${segments.join("/")}${slash}${parsed.search}${parsed.hash}`;
}

/**
 * Serve the workspace origin in this context (called once per BrowserContext); `notice` tells the
 * next response of what Chromium refused before the route could answer.
 */
export async function serveWorkspace(context: BrowserContext, workspace: string, notice: (text: string) => void): Promise<void> {
  await context.route(`${WORKSPACE_ORIGIN}/**`, (route) => fulfil(route, workspace));
  await context.addInitScript(withoutWebRtc, WORKSPACE_ORIGIN);
  // Chromium already pauses every request for the route above, so guarding the rest costs little.
  await context.route(
    (url) => !isWorkspaceUrl(url.href),
    async (route) => {
      if (mayLeaveWorkspace(route.request())) await route.fallback();
      else await refuse(route, 403, `A workspace page may not open other sites; open ${route.request().url()} with ${toolName("navigate")}.`);
    },
  );
  // the page's Connection-Allowlist stops its navigations to other sites before the route sees
  // them: the tab shows Chromium's error page, so the next response says why and what to do instead
  const held =
    "A workspace page may not open other sites: Chromium stopped this page's own navigation away (ERR_NETWORK_ACCESS_REVOKED). " +
    `Open the address you want with ${toolName("navigate")}.`;
  context.on("page", (page) => onLeavingHeld(page, () => notice(held)));
}

/**
 * Runs in every document before its own scripts: WebRTC reaches any host (STUN/TURN) and no
 * content security policy governs it, so workspace documents (and the opaque frames inside them:
 * cross-origin, their parents cannot reach in to borrow theirs) go without it.
 */
function withoutWebRtc(workspaceOrigin: string): void {
  if (!location.href.startsWith(`${workspaceOrigin}/`) && origin !== "null") return;
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection"]) Reflect.deleteProperty(window, name);
}

async function refuse(route: Route, status: number, body: string): Promise<void> {
  await route.fulfill({ status, contentType: "text/plain; charset=utf-8", headers: headers(INERT_POLICY), body });
}

async function fulfil(route: Route, workspace: string): Promise<void> {
  const request = route.request();
  if (!(await mayLoadWorkspace(request))) {
    await refuse(route, 403, `Workspace files are only reachable from workspace pages or ${toolName("navigate")}.`);
    return;
  }
  const { pathname } = new URL(request.url());
  let real: string;
  try {
    const decoded = pathname
      .split("/")
      .map((s) => decodeURIComponent(s))
      .join("/");
    real = resolveInWorkspace(workspace, `.${decoded}`);
  } catch (err) {
    const message = err instanceof ToolError ? err.message : "Bad path.";
    await refuse(route, /outside the workspace/.test(message) ? 403 : 404, message);
    return;
  }
  const found = readConfined(workspace, real);
  if (!found) {
    await refuse(route, 404, "Not found.");
  } else if (found.directory) {
    // Links in the listing are absolute: a redirect to add the trailing slash would not come back
    // through this route (Playwright does not route redirected requests).
    await route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", headers: headers(INERT_POLICY), body: listing(workspace, real) });
  } else {
    const policy = isDownload(workspace, real) ? INERT_POLICY : PAGE_POLICY;
    await route.fulfill({ status: 200, contentType: mimeTypeOf(real, false), headers: headers(policy), body: found.body });
  }
}

/** A file the browser saved from a page: its name and bytes are the page's choice, so it never runs. */
function isDownload(workspace: string, real: string): boolean {
  const rel = relativeToWorkspace(workspace, real);
  return rel.split(path.sep)[0] === DOWNLOADS_FOLDER;
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
  const base = rel === "." ? "/" : `/${rel.split(path.sep).map(encodeURIComponent).join("/")}/`;
  const items = entries.map((e) => {
    const slash = e.isDirectory() ? "/" : "";
    return `<li><a href="${escapeHtml(base + encodeURIComponent(e.name) + slash)}">${escapeHtml(e.name + slash)}</a></li>`;
  });
  const title = escapeHtml(`Index of /${rel === "." ? "" : rel}`);
  return `<!doctype html><meta charset=utf-8><title>${title}</title><h1>${title}</h1><ul>${items.join("")}</ul>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
