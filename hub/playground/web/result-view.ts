// A tool result as a person wants to see it: text as text, Markdown rendered (sanitized: results
// are untrusted), JSON pretty and foldable, images as pictures, errors marked.
import DOMPurify from "dompurify";
import { marked } from "marked";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { formatBytes, h, replace, type Child } from "./dom.js";
import { jsonTree } from "./json-tree.js";

type Content = CallToolResult["content"][number];

// Links in results open in a new tab and never hand over the playground window.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

export function renderMarkdown(text: string): HTMLElement {
  const html = marked.parse(text, { async: false, gfm: true });
  const clean = DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input", "button"] });
  const el = h("div", { class: "markdown" });
  el.innerHTML = clean; // sanitized just above
  return el;
}

// Strong signs only (headings, fences, tables, links, emphasis): plain command output should stay plain.
const MARKDOWN_SIGNS = [/^#{1,6}\s+\S/m, /^```/m, /^\|.+\|\s*$/m, /\[[^\]\n]+\]\([^)\s]+\)/, /\*\*[^*\n]+\*\*/, /^\s{0,3}[-*+]\s+\S.*\n\s{0,3}[-*+]\s+\S/m];

export function looksLikeMarkdown(text: string): boolean {
  return MARKDOWN_SIGNS.filter((re) => re.test(text)).length >= 1 && !/^\s*[[{]/.test(text);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const t = text.trim();
  if (!/^[[{]/.test(t)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
}

/** Several views of one text, with a switch between them (Rendered / Plain). */
function switchable(views: [string, () => HTMLElement][]): HTMLElement {
  const body = h("div", { class: "view-body" });
  const buttons = views.map(([name, make], i) => {
    const button = h("button", { type: "button", class: "ghost small", "data-view": name.toLowerCase() }, name);
    button.addEventListener("click", () => {
      buttons.forEach((b) => b.classList.toggle("active", b === button));
      replace(body, make());
    });
    if (i === 0) {
      button.classList.add("active");
      replace(body, make());
    }
    return button;
  });
  return h("div", { class: "switchable" }, h("div", { class: "view-switch" }, buttons), body);
}

export function renderText(text: string, mimeType?: string): HTMLElement {
  const plain = () => h("pre", { class: "text" }, text);
  const json = mimeType === undefined || mimeType.includes("json") ? parseJson(text) : { ok: false as const };
  if (json.ok)
    return switchable([
      ["JSON", () => jsonTree(json.value)],
      ["Plain", plain],
    ]);
  if (mimeType === "text/markdown" || (mimeType === undefined && looksLikeMarkdown(text))) {
    return switchable([
      ["Rendered", () => renderMarkdown(text)],
      ["Plain", plain],
    ]);
  }
  return plain();
}

function renderImage(data: string, mimeType: string, alt: string): HTMLElement {
  const meta = h("span", { class: "muted" }, `${mimeType} · ${formatBytes(Math.floor((data.length * 3) / 4))}`);
  const img = h("img", { class: "result-image", src: `data:${mimeType};base64,${data}`, alt });
  img.addEventListener("load", () => meta.append(` · ${img.naturalWidth}×${img.naturalHeight}`));
  img.addEventListener("click", () => img.classList.toggle("zoomed"));
  return h("figure", { class: "image-block" }, img, h("figcaption", null, meta));
}

function block(kind: string, body: Child, note?: string): HTMLElement {
  return h(
    "section",
    { class: `content-block kind-${kind}` },
    h("div", { class: "block-head" }, h("span", { class: "tag" }, kind), note ? h("span", { class: "muted" }, note) : null),
    body,
  );
}

export function renderContent(item: Content): HTMLElement {
  switch (item.type) {
    case "text":
      return block("text", renderText(item.text));
    case "image":
      return block("image", renderImage(item.data, item.mimeType, "Image returned by the tool"));
    case "audio":
      return block("audio", h("audio", { controls: true, src: `data:${item.mimeType};base64,${item.data}` }), item.mimeType);
    case "resource_link":
      return block(
        "link",
        h("div", { class: "resource-link" }, h("code", null, item.uri), item.description ? h("p", { class: "muted" }, item.description) : null),
        item.name,
      );
    case "resource": {
      const r = item.resource;
      const note = [r.uri, r.mimeType].filter(Boolean).join(" · ");
      if ("text" in r && typeof r.text === "string") return block("resource", renderText(r.text, r.mimeType), note);
      if ("blob" in r && typeof r.blob === "string" && r.mimeType?.startsWith("image/")) return block("resource", renderImage(r.blob, r.mimeType, r.uri), note);
      return block(
        "resource",
        h("p", { class: "muted" }, `Binary content, ${formatBytes(Math.floor(((r as { blob?: string }).blob?.length ?? 0) * 0.75))}`),
        note,
      );
    }
    default:
      return block("unknown", jsonTree(item));
  }
}

export interface OutputCheck {
  valid: boolean;
  message?: string;
}

export function renderResult(result: CallToolResult, check?: OutputCheck): HTMLElement {
  const parts: HTMLElement[] = result.content.map(renderContent);
  if (result.content.length === 0) parts.push(h("p", { class: "muted" }, "The tool returned no content."));
  if (result.structuredContent !== undefined) {
    const badge = check
      ? h("span", { class: `badge ${check.valid ? "ok" : "warn"}` }, check.valid ? "matches output schema" : `does not match output schema: ${check.message}`)
      : null;
    parts.push(
      h(
        "section",
        { class: "content-block kind-structured" },
        h("div", { class: "block-head" }, h("span", { class: "tag" }, "structured"), badge),
        jsonTree(result.structuredContent),
      ),
    );
  }
  const raw = h("details", { class: "raw" }, h("summary", null, "Raw result"), h("pre", { class: "raw-json" }, JSON.stringify(result, null, 2)));
  return h("div", { class: "result-body" }, parts, raw);
}
