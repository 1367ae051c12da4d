// The project as the documentation tests read it: its root, its source and documentation files,
// and the comments in a source file (with the line each starts on).
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { installRoot } from "../../hub/config/config.js";

/** The repository (the folder holding dist/). */
export const root = installRoot();

/** Folders whose source comments name project files. */
export const SOURCE_FOLDERS = ["hub", "servers", "test", "bench", "docker", "deploy", "scripts"];

// never the project's own: installs, builds, a hub's default workspace
const SKIPPED = new Set(["node_modules", "dist", ".git", "workspace"]);

/** Every file under `folder` (relative to the root), skipping installs and build output. */
export function filesUnder(folder: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      if (SKIPPED.has(entry.name)) continue;
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) out.push(child);
    }
  };
  if (fs.existsSync(path.join(root, folder))) walk(folder);
  return out.sort();
}

/** README.md and every Markdown file under docs/ (relative to the root): the documentation whose examples are run. */
export function documentationFiles(): string[] {
  return ["README.md", ...filesUnder("docs").filter((f) => f.endsWith(".md"))];
}

/** Every Markdown file of the project (bench/README.md and the like besides the documentation). */
export function markdownFiles(): string[] {
  return ["README.md", ...[...SOURCE_FOLDERS, "docs"].flatMap(filesUnder).filter((f) => f.endsWith(".md"))];
}

export interface Comment {
  line: number;
  text: string;
}

const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

/** Every comment of a TypeScript or JavaScript file, found by the compiler's own scanner (so `//` in a string or template is none). */
function scriptComments(file: string, text: string): Comment[] {
  const kind = /\.(c|m)?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const found = new Map<number, Comment>();
  // every comment is trivia in front of some token: visiting every token's leading trivia finds them all
  const visit = (node: ts.Node) => {
    for (const range of ts.getLeadingCommentRanges(text, node.pos) ?? []) {
      if (!found.has(range.pos)) found.set(range.pos, { line: lineOf(text, range.pos), text: text.slice(range.pos, range.end) });
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found.values()].sort((a, b) => a.line - b.line);
}

/** Comments of a language whose comments run from `marker` to the end of the line (shell, Python, YAML, nginx, Dockerfile). */
function lineComments(text: string, marker: RegExp): Comment[] {
  const out: Comment[] = [];
  text.split("\n").forEach((line, i) => {
    const at = line.search(marker);
    if (at >= 0) out.push({ line: i + 1, text: line.slice(at) });
  });
  return out;
}

/** Block comments (`/* … *\/`, `<!-- … -->`) and, with `lineMarker`, line comments too (C). */
function blockComments(text: string, open: string, close: string): Comment[] {
  const out: Comment[] = [];
  for (let at = text.indexOf(open); at >= 0; at = text.indexOf(open, at + open.length)) {
    const end = text.indexOf(close, at + open.length);
    out.push({ line: lineOf(text, at), text: text.slice(at, end < 0 ? undefined : end + close.length) });
    if (end < 0) break;
    at = end;
  }
  return out;
}

// `#` starting a line or after a blank: not `${#x}`, `a#b` or a URL's fragment
const HASH_COMMENT = /(^|\s)#/;

/** The comments of one source file; none for files that hold data rather than code. */
export function commentsOf(file: string, text: string): Comment[] {
  const base = path.basename(file);
  if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(base)) return scriptComments(file, text);
  if (/\.(sh|py|ya?ml|conf|template|toml)$/.test(base) || base === "Dockerfile" || base === "run") return lineComments(text, HASH_COMMENT);
  if (/\.c$/.test(base)) return [...blockComments(text, "/*", "*/"), ...lineComments(text, /(^|\s)\/\//)];
  if (/\.css$/.test(base)) return blockComments(text, "/*", "*/");
  if (/\.(html|svg)$/.test(base)) return blockComments(text, "<!--", "-->");
  return [];
}
