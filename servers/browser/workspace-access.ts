// Who may load a workspace URL. Workspace documents are sandboxed (workspace-origin.ts) and cannot
// read each other, but a foreign page must not even put one on screen or include one: it could
// otherwise open a file it had just downloaded into the workspace, or frame the agent's pages.
// And a workspace page must not send the tab off to another site (with what it read in the URL).
// A page-started navigation and the server's own page.goto look the same to the route (the frame
// still shows the old document, and a page may send no Referer), so the server marks its own.
import type { Frame, Page, Request } from "playwright-core";

export const WORKSPACE_ORIGIN = "http://workspace.agentbox.invalid";

export function isWorkspaceUrl(url: string): boolean {
  return url === WORKSPACE_ORIGIN || url.startsWith(`${WORKSPACE_ORIGIN}/`);
}

/** A navigation a browser tool started: to this URL, or (back/forward) to any history entry. */
type ToolNavigation = { url: string } | { anyHistoryEntry: true };

const toolNavigations = new WeakMap<Page, Set<ToolNavigation>>();

/**
 * Run a navigation the server itself starts (navigate, a new tab, back, forward, reload); while it
 * runs the workspace route lets this page's top-level navigation to `url` through (or to any URL
 * when `url` is undefined: back and forward do not say where they go).
 */
export async function asToolNavigation<T>(page: Page, url: string | undefined, go: () => Promise<T>): Promise<T> {
  const mark: ToolNavigation = url === undefined ? { anyHistoryEntry: true } : { url: comparable(url) };
  let marks = toolNavigations.get(page);
  if (!marks) toolNavigations.set(page, (marks = new Set()));
  marks.add(mark);
  try {
    return await go();
  } finally {
    marks.delete(mark);
  }
}

function startedByTool(page: Page, url: string): boolean {
  const target = comparable(url);
  for (const mark of toolNavigations.get(page) ?? []) if ("anyHistoryEntry" in mark || mark.url === target) return true;
  return false;
}

/** The URL without its fragment and with its path decoded, as Chromium may re-encode the path. */
function comparable(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${decodeURIComponent(parsed.pathname)}${parsed.search}`;
  } catch {
    return url;
  }
}

/**
 * May this request reach the workspace? Subresources only for a workspace document; a frame only
 * inside one; a tab only when a browser tool navigates it, or when it already shows a workspace
 * document that no foreign page opened. Redirects into the workspace are refused (Playwright does
 * not route redirected requests today; this keeps it so if it starts to).
 */
export async function mayLoadWorkspace(request: Request): Promise<boolean> {
  if (request.redirectedFrom()) return false;
  let frame: Frame;
  try {
    frame = request.frame();
  } catch {
    return false; // a service worker's request: no document of ours asked for it
  }
  if (!request.isNavigationRequest()) return isWorkspaceUrl(frame.url());
  const parent = frame.parentFrame();
  if (parent) return isWorkspaceUrl(parent.url());
  if (startedByTool(frame.page(), request.url())) return true;
  if (!isWorkspaceUrl(frame.url())) return false; // a foreign page's location, link, form or refresh
  const opener = await frame
    .page()
    .opener()
    .catch(() => null);
  return !opener || isWorkspaceUrl(opener.url());
}

/**
 * May this request to another site go ahead? Not when a workspace document sends its tab or a
 * frame there (location, a link, a refresh): its content security policy already stops its
 * fetches, beacons, images, forms and popups, but no such policy governs where a document
 * navigates (its Connection-Allowlist does, in a Chromium that has that feature: then this never
 * sees the navigation, see onLeavingHeld). The browser tools themselves still go anywhere.
 */
export function mayLeaveWorkspace(request: Request): boolean {
  if (!request.isNavigationRequest()) return true;
  let frame: Frame;
  try {
    frame = request.frame();
  } catch {
    return true;
  }
  const parent = frame.parentFrame();
  if (parent) return !isWorkspaceUrl(parent.url());
  return !isWorkspaceUrl(frame.url()) || startedByTool(frame.page(), request.url());
}

/**
 * Calls `held` when a workspace document's own navigation (a link, `location`, a frame's) ended on
 * Chromium's error page: its Connection-Allowlist (./workspace-origin.ts) stops such a navigation
 * before any route sees it. A browser tool's navigation that fails is the tool's to report.
 */
export function onLeavingHeld(page: Page, held: () => void): void {
  const shown = new WeakMap<Frame, string>();
  page.on("framenavigated", (frame) => {
    const before = shown.get(frame);
    shown.set(frame, frame.url());
    if (frame.url().startsWith(ERROR_PAGE) && before && isWorkspaceUrl(before) && !toolNavigations.get(page)?.size) held();
  });
}

/** Where Chromium shows a navigation that failed. */
const ERROR_PAGE = "chrome-error://";
