// arXiv identifiers: new style (2401.12345, 2401.12345v2; 0704.0001 with four digits) and old
// style (hep-ex/0307015, math.GT/0309136v1). Users paste them in many shapes (arXiv:…, abs or pdf
// URLs); we accept those and hand the API only the bare id.
import { ToolError } from "../lib/tool.js";

const NEW_ID = /^\d{4}\.\d{4,5}(v\d+)?$/;
const OLD_ID = /^[a-z]+(-[a-z]+)*(\.[A-Z]{2})?\/\d{7}(v\d+)?$/;

export function isArxivId(id: string): boolean {
  return NEW_ID.test(id) || OLD_ID.test(id);
}

export function normalizeId(input: string): string {
  let id = input.trim();
  id = id.replace(/^arxiv:/i, "");
  id = id.replace(/^https?:\/\/(export\.|www\.)?arxiv\.org\/(abs|pdf)\//i, "");
  id = id.replace(/\.pdf$/i, "");
  if (!isArxivId(id)) {
    throw new ToolError(`'${input}' is not an arXiv id; expected e.g. 2401.12345, 2401.12345v2 or hep-ex/0307015.`);
  }
  return id;
}

/** "2401.12345v2" → { base: "2401.12345", version: 2 }. */
export function splitVersion(id: string): { base: string; version: number | null } {
  const m = /^(.*?)(?:v(\d+))?$/.exec(id)!;
  return { base: m[1]!, version: m[2] ? Number(m[2]) : null };
}

/** The id as it appears at the end of an entry's <id> URL (http://arxiv.org/abs/<id>). */
export function idFromEntryUrl(url: string): string {
  return url.replace(/^.*?\/abs\//, "").trim();
}

// Old-style ids contain one "/", and archive names never contain "_", so this is reversible.
export function fileSafe(id: string): string {
  return id.replace("/", "_");
}

export function fromFileSafe(name: string): string {
  return name.replace("_", "/");
}
