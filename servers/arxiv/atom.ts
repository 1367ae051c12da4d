// The arXiv API's Atom feed → papers. Namespace prefixes are dropped (opensearch:, arxiv:) and
// links are recognised by rel/title/type when present and by their URL when not: in Nov 2025
// the API briefly served <link href="…"/> without any attributes.
import { XMLParser } from "fast-xml-parser";
import { z } from "zod";
import { ToolError } from "../lib/tool.js";
import { idFromEntryUrl, splitVersion } from "./ids.js";

export const paperSchema = z.object({
  id: z.string().describe("arXiv id with version, e.g. 2401.12345v2"),
  version: z.number().nullable(),
  title: z.string(),
  authors: z.array(z.string()),
  abstract: z.string(),
  categories: z.array(z.string()),
  primaryCategory: z.string().nullable(),
  published: z.string().nullable(),
  updated: z.string().nullable(),
  comment: z.string().nullable(),
  journalRef: z.string().nullable(),
  doi: z.string().nullable(),
  absUrl: z.string(),
  pdfUrl: z.string(),
});
export type Paper = z.infer<typeof paperSchema>;

export interface Feed {
  total: number;
  start: number;
  perPage: number;
  papers: Paper[];
}

/** arXiv's way of failing: HTTP 200 (or 400) with a feed whose single entry is titled "Error". */
export class ArxivApiError extends ToolError {}

const ARRAYS = new Set(["feed.entry", "feed.entry.author", "feed.entry.link", "feed.entry.category"]);
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  removeNSPrefix: true,
  parseTagValue: false, // ids like 2401.10000 must stay strings
  isArray: (_name, jpath) => ARRAYS.has(String(jpath)),
});

type Node = Record<string, unknown>;

function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const raw = typeof value === "object" ? (value as Node)["#text"] : value;
  if (raw === undefined || raw === null) return null;
  const clean = String(raw).replace(/\s+/g, " ").trim();
  return clean || null;
}

function attr(node: unknown, name: string): string | null {
  return node && typeof node === "object" ? (((node as Node)[`@_${name}`] as string | undefined) ?? null) : null;
}

export function parseFeed(xml: string): Feed {
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch {
    throw new ToolError("arXiv answered with something that is not an Atom feed.");
  }
  const feed = doc.feed as Node | undefined;
  if (!feed || typeof feed !== "object") throw new ToolError("arXiv answered with something that is not an Atom feed.");
  const entries = (feed.entry as Node[] | undefined) ?? [];
  const failed = entries.find((e) => text(e.title) === "Error" && String(text(e.id)).includes("/api/errors"));
  if (failed) throw new ArxivApiError(`arXiv rejected the request: ${text(failed.summary) ?? "unknown error"}.`);
  return {
    total: Number(text(feed.totalResults) ?? entries.length),
    start: Number(text(feed.startIndex) ?? 0),
    perPage: Number(text(feed.itemsPerPage) ?? entries.length),
    papers: entries.map(toPaper),
  };
}

function toPaper(entry: Node): Paper {
  const links = (entry.link as Node[] | undefined) ?? [];
  const href = (l: Node) => attr(l, "href") ?? "";
  const abs = links.find((l) => attr(l, "rel") === "alternate") ?? links.find((l) => /\/abs\//.test(href(l)));
  // older feeds give the <id> without version but the abstract link with it
  let id = idFromEntryUrl(text(entry.id) ?? "");
  const linked = abs ? idFromEntryUrl(href(abs)) : "";
  if (splitVersion(id).version === null && splitVersion(linked).base === id) id = linked;
  const pdf = links.find((l) => attr(l, "title") === "pdf" || attr(l, "type") === "application/pdf") ?? links.find((l) => /\/pdf\//.test(href(l)));
  const categories = ((entry.category as Node[] | undefined) ?? []).map((c) => attr(c, "term")).filter((t): t is string => Boolean(t));
  return {
    id,
    version: splitVersion(id).version,
    title: text(entry.title) ?? "(untitled)",
    authors: ((entry.author as Node[] | undefined) ?? []).map((a) => text(a.name)).filter((n): n is string => Boolean(n)),
    abstract: text(entry.summary) ?? "",
    categories,
    primaryCategory: attr(entry.primary_category, "term") ?? categories[0] ?? null,
    published: text(entry.published),
    updated: text(entry.updated),
    comment: text(entry.comment),
    journalRef: text(entry.journal_ref),
    doi: text(entry.doi),
    absUrl: (abs && href(abs)) || `https://arxiv.org/abs/${id}`,
    pdfUrl: (pdf && href(pdf)) || `https://arxiv.org/pdf/${id}`,
  };
}
