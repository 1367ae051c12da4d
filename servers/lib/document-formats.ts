// The formats `convert` accepts: one table drives the extension lookup, the MIME lookup for
// fetched and data: sources, the `formats` tool and the "unsupported format" error message.
import { mediaTypeOf } from "./media-type.js";

/** Who turns the bytes into Markdown: markitdown-ts itself, or our own code for the gaps it leaves. */
export type Engine = "markitdown" | "json" | "csv" | "zip" | "media";

export interface Format {
  id: string;
  label: string;
  extensions: string[];
  mimeTypes: string[];
  engine: Engine;
  note?: string;
}

export const FORMATS: readonly Format[] = [
  { id: "pdf", label: "PDF", extensions: [".pdf"], mimeTypes: ["application/pdf"], engine: "markitdown", note: "text layer only (no OCR)" },
  {
    id: "docx",
    label: "Word document",
    extensions: [".docx"],
    mimeTypes: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    engine: "markitdown",
  },
  {
    id: "xlsx",
    label: "Excel workbook",
    extensions: [".xlsx"],
    mimeTypes: ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
    engine: "markitdown",
    note: "one table per sheet",
  },
  { id: "html", label: "HTML", extensions: [".html", ".htm"], mimeTypes: ["text/html", "application/xhtml+xml"], engine: "markitdown" },
  {
    id: "feed",
    label: "RSS / Atom feed",
    extensions: [".rss", ".atom", ".xml"],
    mimeTypes: ["application/rss+xml", "application/atom+xml", "application/xml", "text/xml"],
    engine: "markitdown",
  },
  { id: "ipynb", label: "Jupyter notebook", extensions: [".ipynb"], mimeTypes: ["application/x-ipynb+json"], engine: "markitdown" },
  {
    id: "text",
    label: "Plain text / Markdown",
    extensions: [".txt", ".md", ".markdown", ".text", ".log"],
    mimeTypes: ["text/plain", "text/markdown"],
    engine: "markitdown",
  },
  { id: "csv", label: "CSV", extensions: [".csv"], mimeTypes: ["text/csv"], engine: "csv", note: "rendered as a Markdown table" },
  { id: "json", label: "JSON", extensions: [".json"], mimeTypes: ["application/json"], engine: "json", note: "pretty-printed in a fenced block" },
  {
    id: "zip",
    label: "ZIP archive",
    extensions: [".zip"],
    mimeTypes: ["application/zip", "application/x-zip-compressed"],
    engine: "zip",
    note: "each supported file inside is converted",
  },
  {
    id: "image",
    label: "Image",
    extensions: [".jpg", ".jpeg", ".png"],
    mimeTypes: ["image/jpeg", "image/png"],
    engine: "media",
    note: "metadata only, when exiftool is installed",
  },
];

export function formatByExtension(ext: string): Format | undefined {
  const e = ext.toLowerCase();
  return FORMATS.find((f) => f.extensions.includes(e));
}

export function formatByMime(contentType: string | null | undefined): Format | undefined {
  const mime = mediaTypeOf(contentType);
  return mime ? FORMATS.find((f) => f.mimeTypes.includes(mime)) : undefined;
}

/** Accepts "pdf", ".pdf" or a format id ("feed", "image"), for the `format` override. */
export function formatByName(name: string): { format: Format; ext: string } | undefined {
  const n = name.trim().toLowerCase();
  const ext = n.startsWith(".") ? n : `.${n}`;
  const byExt = formatByExtension(ext);
  if (byExt) return { format: byExt, ext };
  const byId = FORMATS.find((f) => f.id === n);
  return byId ? { format: byId, ext: byId.extensions[0]! } : undefined;
}

export function supportedList(): string {
  return FORMATS.map((f) => `${f.label} (${f.extensions.join(", ")})`).join("; ");
}
