// Reading the page: snapshot, text, Markdown, links, JavaScript results, screenshots and PDFs.
import fs from "node:fs";
import path from "node:path";
import { parseExpressionAt } from "acorn";
import TurndownService from "turndown";
import { z } from "zod";
import { reply, ToolError } from "../../lib/tool.js";
import { relativeToWorkspace, resolveInWorkspace } from "../../lib/workspace.js";
import { capture } from "../capture.js";
import { hasTarget, locate, target } from "../locate.js";
import { pageReply } from "../response.js";
import { browserTool, perform } from "../runtime.js";
import { toolName } from "../../lib/names.js";
import {
  assertOffsetInRange,
  charPagingInput,
  DEFAULT_CHAR_LIMIT,
  itemPageOutput,
  pageFooter,
  pagedText,
  pageOfItems,
  pageOfText,
  pagingInput,
  textPageOutput,
  type TextPage,
} from "../../lib/paging.js";

const { offset: pageStart, nextOffset, totalChars } = textPageOutput;
const reading = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true } as const;

const snapshot = browserTool({
  name: "snapshot",
  title: "Snapshot",
  description: "The current tab's accessibility snapshot (YAML; elements marked [ref=eN] for the action tools), paged by offset/limit.",
  input: { ...charPagingInput },
  output: { url: z.string(), offset: pageStart, totalChars, nextOffset },
  annotations: { ...reading },
  async run({ offset, limit }, b) {
    return pageReply(b, { offset, limit, reuse: offset > 0, pagePosition: true });
  },
});

/** True when the code is a function (arrow or `function`), which we call rather than evaluate. */
function isFunctionSource(code: string): boolean {
  try {
    const node = parseExpressionAt(`(${code})`, 0, { ecmaVersion: "latest" });
    const inner = node.type === "ParenthesizedExpression" ? (node as unknown as { expression: { type: string } }).expression : node;
    return inner.type === "ArrowFunctionExpression" || inner.type === "FunctionExpression";
  } catch {
    return false;
  }
}

const evaluate = browserTool({
  name: "evaluate",
  title: "Evaluate JavaScript",
  description:
    'Run JavaScript in the page: an expression ("document.title") or a function ("() => ...", or "(el) => ..." with a target element). Returns the JSON result.',
  input: {
    code: z.string().describe("Expression or function; may be async"),
    ...target,
  },
  output: { result: z.unknown().describe("The JSON-serialisable result (undefined becomes null).") },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ code, ref, selector }, b) {
    const page = await b.page();
    const asFunction = isFunctionSource(code);
    let result: unknown;
    try {
      if (hasTarget({ ref, selector })) {
        const el = await locate(page, { ref, selector });
        if (!asFunction) throw new ToolError('With a target element, code must be a function taking it, e.g. "(el) => el.value".');
        await perform(b, page, async () => (result = await el.evaluate((node, src) => (0, eval)(`(${src})`)(node), code)));
      } else {
        await perform(b, page, async () => (result = await page.evaluate(asFunction ? `(${code})()` : code)));
      }
    } catch (err) {
      if (err instanceof ToolError) throw err;
      const message = String((err as Error).message ?? err).replace(/^\w+\.evaluate: /, "");
      throw new ToolError(`The script threw: ${message.split("\n")[0]}`);
    }
    const json = result === undefined ? "undefined" : JSON.stringify(result, null, 2);
    // the whole result is in structuredContent; the text shows its head (evaluate has no offset)
    return reply.data(pagedText(pageOfText(json ?? String(result), 0, DEFAULT_CHAR_LIMIT)), { result: result ?? null });
  },
});

const getText = browserTool({
  name: "get_text",
  title: "Get text",
  description: "The visible text of the page or of one element (innerText), paged by offset/limit.",
  input: { ...target, ...charPagingInput },
  output: { url: z.string(), text: z.string(), offset: pageStart, totalChars, nextOffset },
  annotations: { ...reading },
  async run({ ref, selector, offset, limit }, b) {
    const page = await b.page();
    const el = hasTarget({ ref, selector }) ? await locate(page, { ref, selector }) : page.locator("body");
    const text = await el.innerText();
    const part = pageOfText(text, offset, limit);
    return reply.data(pagedText(part, toolName("get_text")), pageData(page.url(), "text", part));
  },
});

/** A page of what a tool read off the page, as its structured data: the text under the tool's own key. */
function pageData(url: string, key: "text" | "markdown", part: TextPage): Record<string, unknown> {
  return { url, [key]: part.text, offset: part.offset, totalChars: part.totalChars, nextOffset: part.nextOffset };
}

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
turndown.remove(["script", "style", "noscript", "template"]);

const getMarkdown = browserTool({
  name: "get_markdown",
  title: "Get Markdown",
  description: "The page (or one element) converted to Markdown, with absolute link URLs; paged by offset/limit.",
  input: { ...target, ...charPagingInput },
  output: { url: z.string(), markdown: z.string(), offset: pageStart, totalChars, nextOffset },
  annotations: { ...reading },
  async run({ ref, selector, offset, limit }, b) {
    const page = await b.page();
    const el = hasTarget({ ref, selector }) ? await locate(page, { ref, selector }) : page.locator("html");
    // Make links and images absolute in a copy, so the Markdown works outside the page.
    const html = await el.evaluate((node) => {
      const copy = node.cloneNode(true) as Element;
      const originals = node.querySelectorAll("a[href], img[src]");
      copy.querySelectorAll("a[href], img[src]").forEach((c, i) => {
        const o = originals[i] as HTMLAnchorElement & HTMLImageElement;
        if (c.hasAttribute("href")) c.setAttribute("href", o.href);
        else c.setAttribute("src", o.src);
      });
      return copy.outerHTML;
    });
    const markdown = turndown.turndown(html).trim();
    const part = pageOfText(markdown, offset, limit);
    return reply.data(pagedText(part, toolName("get_markdown")), pageData(page.url(), "markdown", part));
  },
});

const links = browserTool({
  name: "links",
  title: "Links",
  description: "The links on the current page (text and absolute URL), in document order.",
  input: pagingInput({ unit: "link", defaultLimit: 200, maxLimit: 1000 }),
  output: { links: z.array(z.object({ text: z.string(), href: z.string() })), ...itemPageOutput, total: z.number().describe("Links on the page") },
  annotations: { ...reading },
  async run({ offset, limit }, b) {
    const page = await b.page();
    const all = await page.evaluate(() =>
      [...document.querySelectorAll("a[href]")].map((a) => ({
        text: ((a as HTMLElement).innerText || a.getAttribute("aria-label") || "").trim().replace(/\s+/g, " "),
        href: (a as HTMLAnchorElement).href,
      })),
    );
    const part = pageOfItems(all, offset, limit);
    assertOffsetInRange(part, "links");
    const { items, ...position } = part;
    const lines = items.map((l, i) => `${offset + i}. [${l.text}](${l.href})`);
    const footer = pageFooter({ items, ...position }, "links", toolName("links"));
    if (footer) lines.push(footer);
    return reply.data(lines.join("\n") || "No links on this page.", { links: items, ...position, total: all.length });
  },
});

const screenshot = browserTool({
  name: "screenshot",
  title: "Screenshot",
  description: "A PNG of the viewport, full page or one element, at most 1568 px on the long side.",
  input: { ...target, fullPage: z.boolean().default(false).describe("The whole scrollable page") },
  annotations: { ...reading },
  async run({ ref, selector, fullPage }, b) {
    const page = await b.page();
    if (fullPage && hasTarget({ ref, selector })) throw new ToolError("Give either fullPage or a target element, not both.");
    const element = hasTarget({ ref, selector }) ? await locate(page, { ref, selector }) : undefined;
    const shot = await capture(page, { element, fullPage });
    const scaled = shot.scale < 1 ? `, scaled to ${Math.round(shot.scale * 100)}%` : "";
    return reply.image(
      shot.base64,
      "image/png",
      `Screenshot of ${element ? (ref ?? selector) : fullPage ? "the full page" : "the viewport"} of ${page.url()}: ${shot.width}x${shot.height} px${scaled}.`,
    );
  },
});

const pdf = browserTool({
  name: "pdf",
  title: "Save as PDF",
  description: "Save the current page as a PDF file in the workspace.",
  input: {
    path: z.string().optional().describe("Workspace path (default page-<time>.pdf)"),
    format: z.enum(["A4", "Letter", "Legal", "A3", "A5"]).default("A4").describe("Paper size"),
    landscape: z.boolean().default(false),
  },
  output: { path: z.string(), bytes: z.number() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ path: wanted, format, landscape }, b) {
    const page = await b.page();
    const target = resolveInWorkspace(b.workspace, wanted ?? `page-${new Date().toISOString().replace(/[:.]/g, "-")}.pdf`, {
      allowMissing: true,
      noFollowFinal: true,
    });
    if (fs.statSync(target, { throwIfNoEntry: false })?.isDirectory()) {
      throw new ToolError(`'${wanted}' is a folder; give a file path for the PDF, e.g. '${path.posix.join(wanted ?? ".", "page.pdf")}'.`);
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    await page.pdf({ path: target, format, landscape, printBackground: true });
    const rel = relativeToWorkspace(b.workspace, target);
    const bytes = fs.statSync(target).size;
    return reply.data(`Saved ${page.url()} as ${rel} (${bytes} bytes).`, { path: rel, bytes });
  },
});

export default [snapshot, evaluate, getText, getMarkdown, links, screenshot, pdf];
