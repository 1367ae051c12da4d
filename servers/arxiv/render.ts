// Papers as text for the model: the same layout in search, get and download results.
import type { Paper } from "./atom.js";

const MAX_AUTHORS = 8;

export function renderPaper(paper: Paper, index: number | null, abstractChars = Infinity): string {
  const authors =
    paper.authors.length > MAX_AUTHORS
      ? `${paper.authors.slice(0, MAX_AUTHORS).join(", ")} and ${paper.authors.length - MAX_AUTHORS} more`
      : paper.authors.join(", ");
  const cats = paper.categories.map((c) => (c === paper.primaryCategory ? `${c} (primary)` : c)).join(", ");
  const dates = [paper.published && `published ${paper.published.slice(0, 10)}`, paper.updated && `updated ${paper.updated.slice(0, 10)}`]
    .filter(Boolean)
    .join(", ");
  const abstract = paper.abstract.length > abstractChars ? `${paper.abstract.slice(0, abstractChars).trimEnd()}…` : paper.abstract;
  const lines = [
    `${index === null ? "" : `${index}. `}${paper.title} [${paper.id}]`,
    `   Authors: ${authors || "unknown"}`,
    `   Categories: ${cats || "none"}${dates ? ` · ${dates}` : ""}`,
    paper.comment && `   Comment: ${paper.comment}`,
    paper.journalRef && `   Journal: ${paper.journalRef}`,
    paper.doi && `   DOI: ${paper.doi}`,
    `   Abstract: ${abstract}`,
    `   Links: ${paper.absUrl} · PDF ${paper.pdfUrl}`,
  ];
  return lines.filter(Boolean).join("\n");
}
