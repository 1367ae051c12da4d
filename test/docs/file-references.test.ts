// Every project file a reader is sent to exists: paths named in README.md, docs/*.md and the other
// Markdown files (in text, code and links, with the heading a link's #anchor names), and in every source comment under
// hub/, servers/, test/, bench/, docker/, deploy/ and scripts/. A file renamed without its mentions
// fails here, naming each stale mention and where it stands.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { commentsOf, filesUnder, markdownFiles, root, SOURCE_FOLDERS } from "./project.js";
import { anchorsOf } from "./markdown.js";

// The project's top-level folders: a path starting with one of them names a project file.
const TOP = ["hub", "servers", "test", "bench", "docker", "deploy", "scripts", "docs", "dist", ".ci"];
const ROOTED = new RegExp(`(?<![\\w@./~-])((?:${TOP.map((t) => t.replace(".", "\\.")).join("|")})/[\\w.-]*(?:/[\\w.-]+)*/?)`, "g");
const RELATIVE = /(?<![\w@./~-])(\.\.?\/[\w.-]+(?:\/[\w.-]+)*\/?)/g;
// a glob, a placeholder or a template follows: not one file
const NOT_A_PATH_AFTER = /^[*<{$[]/;

/** What a mention names, without the sentence's own last dot. */
const trimmed = (mention: string) => mention.replace(/\.+$/, "");

/** Whether `target` is in the project: as written, or as the source a compiled name stands for (x.js for x.ts). */
function exists(target: string): boolean {
  const candidates = [target, target.replace(/\.js$/, ".ts"), `${target}.ts`];
  return candidates.some((c) => c.startsWith(root) && fs.existsSync(c));
}

interface Mention {
  file: string;
  line: number;
  path: string;
}

/** The paths `text` (found at `line` of `file`) names: rooted ones from the project's top, relative ones from `file`'s folder. */
function mentionsIn(file: string, line: number, text: string): Mention[] {
  const out: Mention[] = [];
  const scan = (pattern: RegExp, resolve: (p: string) => string[]) => {
    for (const match of text.matchAll(pattern)) {
      const after = text.slice(match.index + match[0].length);
      if (NOT_A_PATH_AFTER.test(after)) continue;
      const mention = trimmed(match[1]);
      // a file has an extension and a folder ends with "/": "hub/servers", "./x" or "./workspace" are words and examples, not paths
      if (!/\.\w+$|\/$/.test(mention) || mention.endsWith("/.")) continue;
      if (!resolve(mention).some(exists)) out.push({ file, line: line + text.slice(0, match.index).split("\n").length - 1, path: mention });
    }
  };
  scan(ROOTED, (p) => [path.join(root, p)]);
  const folder = path.dirname(path.join(root, file));
  // a shell script's ./paths are usually from the project's root, where the scripts cd to first
  scan(RELATIVE, (p) => [path.resolve(folder, p), ...(/\.(sh|mjs)$|\/run$/.test(file) ? [path.resolve(root, p)] : [])]);
  return out;
}

const MARKDOWN_LINK = /\]\(([^)\s]+)\)/g;

/** The links of a Markdown file that lead into the project and go nowhere: a missing file, or a heading the target lacks. */
function brokenLinks(file: string, text: string): Mention[] {
  const out: Mention[] = [];
  for (const match of text.matchAll(MARKDOWN_LINK)) {
    const target = match[1];
    if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
    const [where, anchor] = target.split("#");
    const resolved = where ? path.resolve(path.dirname(path.join(root, file)), where) : path.join(root, file);
    const line = text.slice(0, match.index).split("\n").length;
    if (!fs.existsSync(resolved)) {
      out.push({ file, line, path: target });
      continue;
    }
    if (anchor && resolved.endsWith(".md") && !anchorsOf(fs.readFileSync(resolved, "utf8")).has(anchor)) {
      out.push({ file, line, path: `${target} (no such heading)` });
    }
  }
  return out;
}

const report = (stale: Mention[]) => stale.map((m) => `  ${m.file}:${m.line}: ${m.path}`).join("\n");

describe("file references", () => {
  test("README.md, docs/*.md and the other Markdown files name only files that exist, and link only to headings that exist", () => {
    const stale: Mention[] = [];
    for (const file of markdownFiles()) {
      const text = fs.readFileSync(path.join(root, file), "utf8");
      text.split("\n").forEach((line, i) => stale.push(...mentionsIn(file, i + 1, line)));
      stale.push(...brokenLinks(file, text));
    }
    assert.deepEqual(stale, [], `the documentation names files or headings that do not exist (fix the mention, or the file):\n${report(stale)}`);
  });

  test("source comments name only files that exist", () => {
    const stale: Mention[] = [];
    let comments = 0;
    for (const file of SOURCE_FOLDERS.flatMap(filesUnder)) {
      for (const comment of commentsOf(file, fs.readFileSync(path.join(root, file), "utf8"))) {
        comments++;
        stale.push(...mentionsIn(file, comment.line, comment.text));
      }
    }
    // the scan itself works: it read the comments of the whole project
    assert.ok(comments > 1000, `only ${comments} comments found under ${SOURCE_FOLDERS.join(", ")}`);
    assert.deepEqual(stale, [], `comments name files that do not exist (point them at the file that holds it now):\n${report(stale)}`);
  });

  test("the scan finds a stale mention when there is one", () => {
    assert.deepEqual(
      mentionsIn("hub/sessions/x.ts", 1, "// see ./child-calls.ts and hub/sessions/registry.ts, hub/nowhere.ts and ../children/calls.ts").map((m) => m.path),
      ["hub/nowhere.ts", "./child-calls.ts"],
    );
  });
});
