// The text replacement behind `edit`: exact matches first, then a whitespace-tolerant match, and
// never a guess: a match count other than the expected one is refused with where the matches are.
import { ToolError } from "../lib/tool.js";

export interface Replacement {
  oldText: string;
  newText: string;
  expectedCount: number;
}

export interface AppliedReplacement {
  mode: "exact" | "whitespace";
  replacements: number;
  lines: number[];
}

interface Match {
  start: number;
  end: number;
}

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

function exactMatches(text: string, needle: string): Match[] {
  const found: Match[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) {
    found.push({ start: i, end: i + needle.length });
  }
  return found;
}

/** The same tokens in the same order, any run of whitespace matching any other run. */
function looseMatches(text: string, needle: string): Match[] {
  const tokens = needle.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) return [];
  const re = new RegExp(tokens.map(escapeRegExp).join("\\s+"), "g");
  return [...text.matchAll(re)].map((m) => ({ start: m.index!, end: m.index! + m[0].length }));
}

/**
 * For a whitespace-tolerant match, carry the file's indentation over to the new text: lines of
 * newText indented like oldText get the file's indentation instead.
 */
function reindent(text: string, match: Match, oldText: string, newText: string): string {
  const lineStart = text.lastIndexOf("\n", match.start - 1) + 1;
  const before = text.slice(lineStart, match.start);
  const fileIndent = /^\s*$/.test(before) ? before : "";
  const oldIndent = /^[ \t]*/.exec(oldText.replace(/^\s*\n/, ""))![0];
  const [first, ...rest] = newText.trim().split("\n");
  return [first, ...rest.map((l) => (oldIndent && l.startsWith(oldIndent) ? fileIndent + l.slice(oldIndent.length) : l))].join("\n");
}

function splice(text: string, matches: Match[], replacementFor: (m: Match) => string): string {
  let out = "";
  let last = 0;
  for (const m of matches) {
    out += text.slice(last, m.start) + replacementFor(m);
    last = m.end;
  }
  return out + text.slice(last);
}

export function applyReplacements(original: string, edits: Replacement[]): { text: string; applied: AppliedReplacement[] } {
  const crlf = original.includes("\r\n");
  let text = original;
  const applied: AppliedReplacement[] = [];
  edits.forEach((edit, i) => {
    const n = i + 1;
    if (edit.oldText.length === 0) throw new ToolError(`Edit #${n}: oldText is empty; give the exact text to replace.`);
    // models write \n; keep a CRLF file CRLF
    const fix = (s: string) => (crlf && !s.includes("\r") ? s.replace(/\n/g, "\r\n") : s);
    const oldText = fix(edit.oldText);
    const newText = fix(edit.newText);
    let mode: AppliedReplacement["mode"] = "exact";
    let matches = exactMatches(text, oldText);
    if (matches.length === 0) {
      mode = "whitespace";
      matches = looseMatches(text, oldText);
    }
    const lines = matches.map((m) => lineOf(text, m.start));
    if (matches.length === 0) {
      throw new ToolError(`Edit #${n}: oldText was not found, not even with whitespace differences ignored. Read the file and copy the exact text.`);
    }
    if (matches.length !== edit.expectedCount) {
      const how = mode === "exact" ? "" : " (ignoring whitespace differences)";
      throw new ToolError(
        `Edit #${n}: oldText matches ${matches.length} times${how}, at lines ${lines.join(", ")}, but expectedCount is ${edit.expectedCount}. ` +
          `Add surrounding lines to make the match unique, or set expectedCount to ${matches.length} to replace every one. Nothing was changed.`,
      );
    }
    text = splice(text, matches, (m) => (mode === "exact" ? newText : reindent(text, m, oldText, newText)));
    applied.push({ mode, replacements: matches.length, lines });
  });
  return { text, applied };
}
