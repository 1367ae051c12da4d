// Going places: navigate, back, forward, reload, and waiting for the page to reach a state.
import { z } from "zod";
import { ToolError } from "../../lib/tool.js";
import { pageReply } from "../response.js";
import { browserTool, perform, sleep } from "../runtime.js";
import { asToolNavigation } from "../workspace-access.js";
import { WORKSPACE_ORIGIN, workspaceUrl } from "../workspace-origin.js";

// Playwright's own names for when a navigation is done: a model knows them without a description on four tools
const waitUntil = z.enum(["load", "domcontentloaded", "networkidle", "commit"]).default("load");

/**
 * http(s), about:blank and data: go anywhere; file: only inside the workspace, and then through
 * the workspace origin, so the page is an http document that cannot reach other files.
 */
function checkUrl(url: string, workspace: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // "example.com/path" — the model often leaves the scheme out.
    if (/^[\w.-]+(:\d+)?(\/|$)/.test(url)) return checkUrl(`http://${url}`, workspace);
    throw new ToolError(`"${url}" is not a URL; give an absolute URL like https://example.com/ or file:///path/in/workspace.`);
  }
  if (parsed.protocol === "file:") return workspaceUrl(workspace, url);
  if (!["http:", "https:", "about:", "data:"].includes(parsed.protocol)) {
    throw new ToolError(`URL scheme ${parsed.protocol} is not allowed; use http:, https:, about:, data: or file: (workspace only).`);
  }
  return parsed.href;
}

const navigate = browserTool({
  name: "navigate",
  title: "Navigate",
  description:
    `Open an absolute URL (http(s), data:, or file: in the workspace) in the current tab; returns the snapshot. ` +
    `Workspace files open as ${WORKSPACE_ORIGIN}/<path>: relative links, images, styles and classic scripts work, ` +
    `but they cannot fetch other files or reach other sites (navigate there instead); files in downloads/ run no scripts.`,
  input: { url: z.string(), waitUntil },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run({ url, waitUntil }, b) {
    const target = checkUrl(url, b.workspace);
    const page = await b.page();
    let status = "";
    await perform(b, page, async () => {
      const response = await asToolNavigation(page, target, () => page.goto(target, { waitUntil }));
      if (response) status = ` (HTTP ${response.status()})`;
    });
    return pageReply(b, { result: `Navigated to ${target}${status}` });
  },
});

function historyTool(name: "back" | "forward" | "reload", description: string) {
  return browserTool({
    name,
    title: name[0].toUpperCase() + name.slice(1),
    description,
    input: { waitUntil },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    async run({ waitUntil }, b) {
      const page = await b.page();
      let moved = true;
      await perform(b, page, async () => {
        const op =
          name === "back"
            ? asToolNavigation(page, undefined, () => page.goBack({ waitUntil }))
            : name === "forward"
              ? asToolNavigation(page, undefined, () => page.goForward({ waitUntil }))
              : asToolNavigation(page, page.url(), () => page.reload({ waitUntil }));
        moved = (await op) !== null || name === "reload";
      });
      // goBack/goForward answer null both for "no history" and for same-document moves; say what we know.
      return pageReply(b, {
        result: moved ? `Went ${name}.` : `${name}: no ${name === "back" ? "previous" : "next"} page with a new document (history may be empty).`,
      });
    },
  });
}

const back = historyTool("back", "Go back in the current tab's history.");
const forward = historyTool("forward", "Go forward in the current tab's history.");
const reload = historyTool("reload", "Reload the current tab.");

const waitFor = browserTool({
  name: "wait_for",
  // a call may run long: a client of the tasks extension gets a task it can poll, not a request held open
  taskSupport: "optional",
  title: "Wait for",
  description: "Wait for text to appear or vanish, a selector to reach a state, or some seconds; returns the snapshot.",
  input: {
    text: z.string().optional().describe("Text to wait for"),
    textGone: z.string().optional().describe("Text to wait to vanish"),
    selector: z.string().optional().describe("CSS/Playwright selector to reach `state`"),
    state: z.enum(["attached", "detached", "visible", "hidden"]).default("visible").describe("For `selector`"),
    time: z.number().min(0).max(60).optional().describe("Seconds to wait (first, or alone)"),
    timeoutMs: z.number().int().min(0).max(120_000).default(10_000).describe("Give up after this many ms"),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ text, textGone, selector, state, time, timeoutMs }, b) {
    if (!text && !textGone && !selector && time === undefined) throw new ToolError("Give text, textGone, selector or time.");
    const page = await b.page();
    const done: string[] = [];
    if (time !== undefined) {
      await sleep(time * 1000);
      done.push(`waited ${time} s`);
    }
    const timeout = timeoutMs;
    try {
      if (text) {
        await page.getByText(text).first().waitFor({ state: "visible", timeout });
        done.push(`"${text}" is visible`);
      }
      if (textGone) {
        await page.getByText(textGone).first().waitFor({ state: "hidden", timeout });
        done.push(`"${textGone}" is gone`);
      }
      if (selector) {
        await page.locator(selector).first().waitFor({ state, timeout });
        done.push(`${selector} is ${state}`);
      }
    } catch (err) {
      if (/Timeout/.test(String(err)))
        throw new ToolError(
          `Still waiting after ${timeout} ms (${done.length ? done.join(", ") + "; " : ""}condition not met). Take a snapshot to see the page.`,
        );
      throw err;
    }
    return pageReply(b, { result: `Done: ${done.join(", ")}.` });
  },
});

export default [navigate, back, forward, reload, waitFor];
