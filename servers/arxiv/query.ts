// Building arXiv's search_query: field-prefixed queries (ti:, au:, abs:, cat:, all:…) and boolean
// operators pass through as written; plain words become all:word AND all:word ("phrases" kept);
// category and submitted-date filters are ANDed on.
import { ToolError } from "../lib/tool.js";

export interface SearchFilters {
  query?: string;
  categories?: string[];
  submittedFrom?: string;
  submittedTo?: string;
}

const FIELD = /(^|[\s(])(ti|au|abs|co|jr|cat|rn|id|all|submittedDate|lastUpdatedDate):/;
const BOOLEAN = /\s(AND|OR|ANDNOT)\s/;
const CATEGORY = /^[a-z]+(-[a-z]+)*(\.[A-Za-z]+(-[A-Za-z]+)*)?$/;

export const SORT_FIELDS = { relevance: "relevance", submitted: "submittedDate", updated: "lastUpdatedDate" } as const;

export function buildSearchQuery(filters: SearchFilters): string {
  const parts: string[] = [];
  const query = filters.query?.trim();
  if (query) parts.push(FIELD.test(query) || BOOLEAN.test(query) ? query : plainWords(query));
  const categories = (filters.categories ?? []).map((c) => c.trim()).filter(Boolean);
  for (const c of categories) {
    if (!CATEGORY.test(c)) throw new ToolError(`'${c}' is not an arXiv category; expected e.g. cs.LG, math.GT, hep-ex.`);
  }
  if (categories.length) parts.push(categories.map((c) => `cat:${c}`).join(" OR "));
  if (filters.submittedFrom || filters.submittedTo) {
    const from = filters.submittedFrom ? stamp(filters.submittedFrom, "0000") : "199101010000";
    const to = filters.submittedTo ? stamp(filters.submittedTo, "2359") : "209912312359";
    parts.push(`submittedDate:[${from} TO ${to}]`);
  }
  if (parts.length === 0) throw new ToolError("Give a query, a category or a date range to search for.");
  return parts.length === 1 ? parts[0]! : parts.map((p) => `(${p})`).join(" AND ");
}

function plainWords(query: string): string {
  const terms = query.match(/"[^"]+"|[^\s"]+/g) ?? [];
  return terms.map((t) => `all:${t}`).join(" AND ");
}

/** "2024-01-31", "20240131" or "2024-01-31T12:30" → arXiv's YYYYMMDDHHMM. */
function stamp(date: string, defaultTime: string): string {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2}):?(\d{2}))?$/.exec(date.trim());
  if (!m) throw new ToolError(`'${date}' is not a date; use YYYY-MM-DD (optionally with THH:MM).`);
  return `${m[1]}${m[2]}${m[3]}${m[4] ? `${m[4]}${m[5]}` : defaultTime}`;
}
