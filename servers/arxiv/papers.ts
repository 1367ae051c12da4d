// Downloaded papers live in <workspace>/papers/<id>.pdf and <id>.md (old-style ids with "/"
// made file-safe), where the file, terminal and markitdown tools can reach them too. The .md
// opens with a small header (title, authors, links) so `list` can show titles without the network.
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../lib/tool.js";
import { relativeToWorkspace, resolveInWorkspace } from "../lib/workspace.js";
import type { Paper } from "./atom.js";
import { fileSafe, fromFileSafe, isArxivId, splitVersion } from "./ids.js";

export const PAPERS_DIR = "papers";

export interface StoredPaper {
  id: string;
  title: string | null;
  pdf: string | null;
  markdown: string | null;
  markdownChars: number | null;
  downloadedAt: string;
}

/** Absolute paths for a paper's files, checked against the workspace (papers/ may be a link). */
export function paperPaths(workspace: string, id: string): { pdf: string; md: string } {
  const name = fileSafe(id);
  const opts = { allowMissing: true, noFollowFinal: true };
  return {
    pdf: resolveInWorkspace(workspace, `${PAPERS_DIR}/${name}.pdf`, opts),
    md: resolveInWorkspace(workspace, `${PAPERS_DIR}/${name}.md`, opts),
  };
}

export function markdownHeader(paper: Paper): string {
  const facts = [
    `arXiv: ${paper.id}`,
    `Authors: ${paper.authors.join(", ")}`,
    paper.primaryCategory && `Category: ${paper.primaryCategory}`,
    paper.published && `Published: ${paper.published}`,
    paper.doi && `DOI: ${paper.doi}`,
    `Abstract page: ${paper.absUrl}`,
  ].filter(Boolean);
  return `# ${paper.title}\n\n${facts.map((f) => `- ${f}`).join("\n")}\n\n---\n\n`;
}

export async function savePaper(workspace: string, id: string, pdf: Buffer, markdown: string): Promise<{ pdf: string; md: string }> {
  const paths = paperPaths(workspace, id);
  await fs.mkdir(path.dirname(paths.pdf), { recursive: true });
  // write then rename, so a reader never sees half a paper (and two downloads never share a temp file)
  for (const [file, data] of [
    [paths.pdf, pdf],
    [paths.md, markdown],
  ] as const) {
    const temp = `${file}.${randomUUID()}.part`;
    await fs.writeFile(temp, data);
    await fs.rename(temp, file);
  }
  return { pdf: relativeToWorkspace(workspace, paths.pdf), md: relativeToWorkspace(workspace, paths.md) };
}

export async function listPapers(workspace: string): Promise<StoredPaper[]> {
  const dir = resolveInWorkspace(workspace, PAPERS_DIR, { allowMissing: true });
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const ids = [...new Set(names.filter((n) => /\.(pdf|md)$/.test(n)).map((n) => fromFileSafe(n.replace(/\.(pdf|md)$/, ""))))];
  const papers = await Promise.all(ids.filter(isArxivId).map((id) => describe(workspace, id)));
  return papers.sort((a, b) => a.id.localeCompare(b.id));
}

async function describe(workspace: string, id: string): Promise<StoredPaper> {
  const paths = paperPaths(workspace, id);
  const [pdfStat, mdStat] = await Promise.all([fs.stat(paths.pdf).catch(() => null), fs.stat(paths.md).catch(() => null)]);
  const text = mdStat ? await fs.readFile(paths.md, "utf8") : null;
  const title = text ? (/^# (.+)$/m.exec(text.slice(0, 2000))?.[1] ?? null) : null;
  return {
    id,
    title,
    pdf: pdfStat ? relativeToWorkspace(workspace, paths.pdf) : null,
    markdown: mdStat ? relativeToWorkspace(workspace, paths.md) : null,
    markdownChars: text?.length ?? null,
    downloadedAt: (mdStat ?? pdfStat)!.mtime.toISOString(),
  };
}

/** The stored paper for an id; an id without version finds the newest downloaded version. */
export async function findPaper(workspace: string, id: string): Promise<StoredPaper | undefined> {
  const papers = await listPapers(workspace);
  const exact = papers.find((p) => p.id === id);
  if (exact || splitVersion(id).version !== null) return exact;
  return papers.filter((p) => splitVersion(p.id).base === id).sort((a, b) => (splitVersion(b.id).version ?? 0) - (splitVersion(a.id).version ?? 0))[0];
}

export async function readMarkdown(workspace: string, paper: StoredPaper): Promise<string> {
  if (!paper.markdown) throw new ToolError(`Paper ${paper.id} has no Markdown text; download it again with force: true.`);
  return fs.readFile(paperPaths(workspace, paper.id).md, "utf8");
}
