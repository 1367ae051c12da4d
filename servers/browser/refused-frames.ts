// Chromium refuses a file: URL in a frame of an http or data: document (workspace pages are http,
// see workspace-origin.ts), and such a frame never commits a document at all: Playwright's page
// snapshot then waits out its whole timeout (10 s) for the frame, on every snapshot of the page.
// Those frames are sent to about:blank, which is all Chromium would ever show in them.
import type { Page } from "playwright-core";

/** Send the page's frames stuck on a refused file: URL to about:blank; their URLs, for a notice. */
export async function releaseRefusedFileFrames(page: Page): Promise<string[]> {
  const released: string[] = [];
  for (const frame of page.frames()) {
    // a frame that committed anything has a URL; a refused one keeps none
    if (frame === page.mainFrame() || frame.url() !== "" || frame.isDetached()) continue;
    const element = await frame.frameElement().catch(() => undefined);
    const src = element ? await element.getAttribute("src").catch(() => null) : null;
    if (!element || !src || !/^\s*file:/i.test(src)) continue;
    await element.evaluate((el) => (el as Element).setAttribute("src", "about:blank")).catch(() => undefined);
    released.push(src.trim().slice(0, 200));
  }
  return released;
}
