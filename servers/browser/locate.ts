// Turning a tool's target (a ref from the latest snapshot, or a selector) into a Locator, with
// errors that tell the model what to do next. Refs resolve the way @playwright/mcp does it: the
// `aria-ref` engine (page.getByRef) against the latest snapshot taken in that frame.
import { z } from "zod";
import { toolName } from "../lib/names.js";
import type { Locator, Page } from "playwright-core";
import { ToolError } from "../lib/tool.js";

const REF_PATTERN = /^(f\d+)?e\d+$/;
const SELECTOR_WAIT_MS = 3_000;

/** The same two target parameters on every tool that acts on an element. */
export const target = {
  ref: z.string().optional().describe("Snapshot ref"),
  selector: z.string().optional().describe("Or a CSS/Playwright selector (first match)"),
};

export interface Target {
  ref?: string;
  selector?: string;
}

export function hasTarget(t: Target): boolean {
  return Boolean(t.ref || t.selector);
}

export async function locate(page: Page, t: Target, what = "element"): Promise<Locator> {
  if (t.ref && t.selector) throw new ToolError("Give either ref or selector, not both.");
  if (t.ref) {
    const ref = t.ref.replace(/^\[?ref=/, "").replace(/\]$/, "");
    if (!REF_PATTERN.test(ref)) throw new ToolError(`"${t.ref}" is not a ref; refs look like e12 (from [ref=e12] in a snapshot).`);
    const locator = page.getByRef(ref);
    // A ref from another page's snapshot (its frame is gone) throws instead of counting 0.
    const count = await locator.count().catch(() => 0);
    if (count === 0) {
      throw new ToolError(
        `Ref ${ref} is not in the current page (the page changed since that snapshot). Take a new ${toolName("snapshot")} and use a ref from it.`,
      );
    }
    return locator;
  }
  if (t.selector) {
    const locator = page.locator(t.selector).first();
    try {
      await locator.waitFor({ state: "attached", timeout: SELECTOR_WAIT_MS });
    } catch (err) {
      if (/Unexpected token|is not a valid selector|Unknown engine/i.test(String(err))) {
        throw new ToolError(`"${t.selector}" is not a valid selector: use CSS, or text=..., role=...[name='...'].`);
      }
      throw new ToolError(`No ${what} matches selector "${t.selector}". Take a ${toolName("snapshot")} and use a ref, or another selector.`);
    }
    return locator;
  }
  throw new ToolError(`Say which ${what}: give ref (from the latest snapshot) or selector.`);
}
