// Screenshots through CDP, because Playwright cannot scale one down: MCP clients reject images
// much over ~1568 px on the long side or ~5 MB, so we capture with a clip scale that fits.
import type { Locator, Page } from "playwright-core";
import { ToolError } from "../lib/tool.js";

export const MAX_SIDE = 1568;
const MAX_BASE64 = Math.floor((5 * 1024 * 1024 * 4) / 3);

export interface Shot {
  base64: string;
  width: number;
  height: number;
  scale: number;
}

export async function capture(page: Page, what: { element?: Locator; fullPage?: boolean }): Promise<Shot> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const metrics = (await cdp.send("Page.getLayoutMetrics")) as {
      cssVisualViewport: { pageX: number; pageY: number; clientWidth: number; clientHeight: number };
      cssContentSize: { width: number; height: number };
    };
    const vp = metrics.cssVisualViewport;
    let clip = { x: vp.pageX, y: vp.pageY, width: vp.clientWidth, height: vp.clientHeight };
    if (what.fullPage) clip = { x: 0, y: 0, width: metrics.cssContentSize.width, height: metrics.cssContentSize.height };
    if (what.element) {
      const box = await what.element.boundingBox();
      if (!box || box.width < 1 || box.height < 1) throw new ToolError("The element has no visible box to capture (hidden or zero-sized).");
      clip = { x: box.x + vp.pageX, y: box.y + vp.pageY, width: box.width, height: box.height };
    }
    let scale = Math.min(1, MAX_SIDE / Math.max(clip.width, clip.height));
    for (let attempt = 0; attempt < 5; attempt++) {
      const { data } = (await cdp.send("Page.captureScreenshot", {
        format: "png",
        clip: { ...clip, scale },
        captureBeyondViewport: Boolean(what.fullPage || what.element),
      })) as { data: string };
      if (data.length <= MAX_BASE64) {
        return { base64: data, width: Math.round(clip.width * scale), height: Math.round(clip.height * scale), scale };
      }
      scale *= 0.7;
    }
    throw new ToolError("The screenshot stays over 5 MB even scaled down; capture an element or the viewport instead.");
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}
