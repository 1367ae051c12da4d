// The arxiv server's one arXiv client (its request spacing and cache hold across every session
// and tool), and the lookup of papers by id through it.
import type { Paper } from "./atom.js";
import { ArxivClient, configFromEnv } from "./client.js";
import { normalizeId, splitVersion } from "./ids.js";

export const arxiv = new ArxivClient(configFromEnv());

/** Metadata for ids (any accepted shape); ids arXiv does not know come back in notFound. */
export async function fetchPapers(ids: string[], signal?: AbortSignal): Promise<{ papers: Paper[]; notFound: string[] }> {
  const wanted = [...new Set(ids.map(normalizeId))];
  const feed = await arxiv.query({ idList: wanted, offset: 0, limit: wanted.length }, signal);
  const papers: Paper[] = [];
  const notFound: string[] = [];
  for (const id of wanted) {
    const exact = splitVersion(id).version !== null;
    const match = feed.papers.find((p) => (exact ? p.id === id : splitVersion(p.id).base === id));
    if (match) papers.push(match);
    else notFound.push(id);
  }
  return { papers, notFound };
}
