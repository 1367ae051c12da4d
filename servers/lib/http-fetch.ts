// HTTP fetching with the two limits every download needs: a size cap (checked on the
// Content-Length header and again while streaming, since the header may lie or be absent) and a
// timeout that also honours the caller's cancellation. Used by markitdown and by arxiv.
import { ToolError } from "./tool.js";

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  /** The tool call's signal: a cancelled call stops the download. */
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface Fetched {
  bytes: Buffer;
  status: number;
  contentType: string | null;
  contentDisposition: string | null;
  /** The URL after redirects. */
  url: string;
  headers: Headers;
}

/** Thrown for non-2xx answers, so callers can tell "busy" (429/503) from "not found". */
export class HttpStatusError extends ToolError {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly retryAfter: string | null,
    /** The start of the error body: some APIs (arXiv) explain the error there. */
    readonly body: string,
  ) {
    super(`HTTP ${status} from ${url}`);
  }
}

export async function fetchLimited(url: string, limits: FetchLimits): Promise<Fetched> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = limits.signal ? AbortSignal.any([limits.signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, { signal, headers: limits.headers, redirect: "follow" });
    if (!res.ok) {
      const body = await readCapped(res, url, 64 * 1024).catch(() => Buffer.alloc(0));
      throw new HttpStatusError(res.status, url, res.headers.get("retry-after"), body.toString("utf8"));
    }
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(url, limits.maxBytes);
    }
    const bytes = await readCapped(res, url, limits.maxBytes);
    return {
      bytes,
      status: res.status,
      contentType: res.headers.get("content-type"),
      contentDisposition: res.headers.get("content-disposition"),
      url: res.url || url,
      headers: res.headers,
    };
  } catch (err) {
    if (err instanceof ToolError) throw err;
    if (timeout.aborted) throw new ToolError(`Timed out after ${limits.timeoutMs} ms fetching ${url}.`);
    if (limits.signal?.aborted) throw new ToolError(`Fetching ${url} was cancelled.`);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new ToolError(`Could not fetch ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

async function readCapped(res: Response, url: string, maxBytes: number): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(url, maxBytes);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

function tooLarge(url: string, maxBytes: number): ToolError {
  return new ToolError(`${url} is larger than the ${maxBytes}-byte limit; refusing to download it.`);
}
