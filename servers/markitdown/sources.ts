// Where a document comes from: a workspace path or file: URI (confined to the workspace), an
// http(s) URL (size cap + timeout), a data: URI, or inline base64 content with a file name.
// Each source ends up as bytes plus the extension that picks the converter.
import path from "node:path";
import { openVerified } from "../lib/safe-fs.js";
import { ToolError } from "../lib/tool.js";
import { relativeToWorkspace, resolveInWorkspace } from "../lib/workspace.js";
import { fetchLimited, HttpStatusError } from "../lib/http-fetch.js";
import { formatByExtension, formatByMime, formatByName, supportedList } from "../lib/document-formats.js";
import { unsupported } from "../lib/convert.js";

export interface SourceRequest {
  source?: string;
  content?: string;
  name?: string;
  format?: string;
}

export interface LoadedSource {
  bytes: Buffer;
  /** The extension that selects the converter (".pdf"); "" when nothing told us. */
  ext: string;
  /** How to name the source in messages and results. */
  label: string;
  url?: string;
}

export interface SourceLimits {
  workspace: string;
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export async function loadSource(req: SourceRequest, limits: SourceLimits): Promise<LoadedSource> {
  const override = req.format ? formatByName(req.format) : undefined;
  if (req.format && !override) throw new ToolError(`Unknown format '${req.format}'. Supported: ${supportedList()}.`);
  const loaded = await loadRaw(req, limits);
  const ext = override?.ext ?? loaded.ext;
  if (!formatByExtension(ext)) throw unsupported(loaded.label, ext);
  if (loaded.bytes.length > limits.maxBytes) {
    throw new ToolError(`${loaded.label} is ${loaded.bytes.length} bytes, over the ${limits.maxBytes}-byte limit.`);
  }
  return { ...loaded, ext };
}

async function loadRaw(req: SourceRequest, limits: SourceLimits): Promise<LoadedSource> {
  if (req.content !== undefined) {
    if (req.source) throw new ToolError("Give either `source` or `content` (+ `name`), not both.");
    return fromBase64(req.content, req.name, req.format);
  }
  const source = req.source?.trim();
  if (!source) throw new ToolError("Nothing to convert: give `source` (path, file:, http(s): or data: URI) or `content` + `name`.");
  if (/^data:/i.test(source)) return fromDataUri(source);
  if (/^https?:\/\//i.test(source)) return fromUrl(source, limits);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) && !/^file:/i.test(source)) {
    throw new ToolError(`Unsupported source scheme in '${source}': use a workspace path, file:, http:, https: or data:.`);
  }
  return fromWorkspace(source, limits);
}

async function fromWorkspace(source: string, limits: SourceLimits): Promise<LoadedSource> {
  const real = resolveInWorkspace(limits.workspace, source);
  const label = relativeToWorkspace(limits.workspace, real);
  // opened first, then proven inside the workspace and not hard-linked, then read from that descriptor
  const { handle, stat } = await openVerified(limits.workspace, real, label);
  try {
    if (!stat.isFile()) throw new ToolError(`'${label}' is not a regular file.`);
    if (stat.size > limits.maxBytes) throw new ToolError(`'${label}' is ${stat.size} bytes, over the ${limits.maxBytes}-byte limit.`);
    return { bytes: await handle.readFile(), ext: path.extname(real).toLowerCase(), label };
  } finally {
    await handle.close();
  }
}

async function fromUrl(url: string, limits: SourceLimits): Promise<LoadedSource> {
  let fetched;
  try {
    fetched = await fetchLimited(url, limits);
  } catch (err) {
    if (err instanceof HttpStatusError) throw new ToolError(`Could not fetch ${url}: the server answered HTTP ${err.status}.`);
    throw err;
  }
  // Prefer what the URL's own name says, then the server's file name, then its Content-Type.
  const urlExt = path.extname(new URL(fetched.url).pathname).toLowerCase();
  const disposition = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(fetched.contentDisposition ?? "")?.[1];
  const dispositionExt = disposition ? path.extname(disposition).toLowerCase() : "";
  const mimeExt = formatByMime(fetched.contentType)?.extensions[0] ?? "";
  const ext = [urlExt, dispositionExt, mimeExt].find((e) => e && formatByExtension(e)) ?? urlExt;
  return { bytes: fetched.bytes, ext, label: url, url: fetched.url };
}

// Node's fetch decodes data: URIs itself (base64 or percent-encoded, with the media type).
async function fromDataUri(uri: string): Promise<LoadedSource> {
  let res: Response;
  try {
    res = await fetch(uri);
  } catch {
    throw new ToolError("Not a valid data: URI; expected data:<media type>[;base64],<data>.");
  }
  const mime = res.headers.get("content-type");
  const ext = formatByMime(mime)?.extensions[0] ?? "";
  if (!ext) throw unsupported(`data: URI of type '${mime?.split(";")[0] || "unknown"}'`, "");
  return { bytes: Buffer.from(await res.arrayBuffer()), ext, label: "data: URI" };
}

function fromBase64(content: string, name: string | undefined, format: string | undefined): LoadedSource {
  if (!name && !format) throw new ToolError("`content` needs a `name` (e.g. report.pdf) or a `format` saying what it is.");
  const compact = content.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) throw new ToolError("`content` is not valid base64.");
  // only the extension of the name is used: the name never reaches a file system or a shell
  const label = name ? path.basename(name) : "inline content";
  return { bytes: Buffer.from(compact, "base64"), ext: name ? path.extname(name).toLowerCase() : "", label };
}
