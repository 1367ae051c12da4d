// Talking to arXiv politely: one request at a time, at least `minIntervalMs` between the starts
// of two requests (arXiv asks for 3 s), a response cache so repeated queries cost nothing, and
// errors that say what happened (error feed, 429/503 with Retry-After, timeout).
import { ToolError } from "../lib/tool.js";
import { fetchLimited, HttpStatusError } from "../lib/http-fetch.js";
import { ArxivApiError, parseFeed, type Feed } from "./atom.js";

export interface ArxivConfig {
  apiUrl: string;
  pdfUrl: string;
  minIntervalMs: number;
  timeoutMs: number;
  cacheTtlMs: number;
  maxPdfBytes: number;
}

function envNumber(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? NaN : Number(raw);
  return Number.isFinite(value) && value >= min ? value : fallback;
}

export function configFromEnv(): ArxivConfig {
  return {
    apiUrl: process.env.ARXIV_API_URL || "https://export.arxiv.org/api/query",
    pdfUrl: (process.env.ARXIV_PDF_URL || "https://arxiv.org/pdf").replace(/\/+$/, ""),
    minIntervalMs: envNumber("ARXIV_MIN_INTERVAL_MS", 3000, 0),
    timeoutMs: envNumber("ARXIV_TIMEOUT_MS", 30_000),
    cacheTtlMs: envNumber("ARXIV_CACHE_TTL_MS", 60 * 60 * 1000, 0),
    maxPdfBytes: envNumber("ARXIV_MAX_PDF_BYTES", 100 * 1024 * 1024),
  };
}

/** One page of an API query: by search terms or by ids, `offset` results in, at most `limit`. */
export interface ArxivQuery {
  searchQuery?: string;
  idList?: string[];
  offset: number;
  limit: number;
  sortBy?: string;
  sortOrder?: string;
}

const CACHE_ENTRIES = 200;
const MAX_FEED_BYTES = 20 * 1024 * 1024;

export class ArxivClient {
  private queue: Promise<unknown> = Promise.resolve();
  private lastStart = 0;
  private readonly cache = new Map<string, { at: number; feed: Feed }>();

  constructor(readonly config: ArxivConfig) {}

  /** Run an API query; the page is asked for in arXiv's own names (start, max_results) only here. */
  async query(query: ArxivQuery, signal?: AbortSignal): Promise<Feed> {
    const url = new URL(this.config.apiUrl);
    const params: Record<string, string | undefined> = {
      search_query: query.searchQuery,
      id_list: query.idList?.join(","),
      start: String(query.offset),
      max_results: String(query.limit),
      sortBy: query.sortBy,
      sortOrder: query.sortOrder,
    };
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
    const key = url.toString();
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < this.config.cacheTtlMs) {
      // refresh its place so the most used answers stay cached
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.feed;
    }
    const feed = await this.request(key, MAX_FEED_BYTES, signal, (bytes) => parseFeed(bytes.toString("utf8")));
    this.cache.set(key, { at: Date.now(), feed });
    while (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    return feed;
  }

  /** Fetch a paper's PDF; `id` is a validated arXiv id (with version when known). */
  async pdf(id: string, signal?: AbortSignal): Promise<Buffer> {
    return this.request(`${this.config.pdfUrl}/${id}`, this.config.maxPdfBytes, signal, (bytes) => {
      if (bytes.subarray(0, 5).toString("latin1") !== "%PDF-") {
        throw new ToolError(`arXiv did not return a PDF for ${id} (it may still be generating it, or the paper has no PDF); try again later.`);
      }
      return bytes;
    });
  }

  private request<T>(url: string, maxBytes: number, signal: AbortSignal | undefined, parse: (bytes: Buffer) => T): Promise<T> {
    const run = async () => {
      const wait = this.lastStart + this.config.minIntervalMs - Date.now();
      if (wait > 0) await sleep(wait, signal);
      this.lastStart = Date.now();
      try {
        const fetched = await fetchLimited(url, { maxBytes, timeoutMs: this.config.timeoutMs, signal, headers: { "user-agent": "agentbox-arxiv/0.1" } });
        return parse(fetched.bytes);
      } catch (err) {
        throw explain(err);
      }
    };
    // chain on the previous request whether it failed or not: strictly one at a time
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

function explain(err: unknown): unknown {
  if (!(err instanceof HttpStatusError)) return err;
  if (err.status === 429 || err.status === 503) {
    const after = err.retryAfter ? ` Retry after ${err.retryAfter} s.` : " Wait a little and retry.";
    return new ToolError(`arXiv is busy or rate-limiting (HTTP ${err.status}).${after}`);
  }
  // arXiv answers malformed queries with HTTP 400 and its error feed; surface that message
  try {
    parseFeed(err.body);
  } catch (feedError) {
    if (feedError instanceof ArxivApiError) return feedError;
  }
  return new ToolError(`arXiv answered HTTP ${err.status} for ${err.url}.`);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ToolError("Cancelled while waiting for the arXiv request slot."));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ToolError("Cancelled while waiting for the arXiv request slot."));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
