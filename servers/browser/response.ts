// The one response every page tool returns: what the tool did, where the page is, what happened
// meanwhile (downloads, new tabs, dialogs, a relaunch), and the accessibility snapshot, bounded
// so one huge page cannot flood the model (the rest is a `snapshot` call with an offset away).
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { reply } from "../lib/tool.js";
import { describeDialog, type BrowserSession } from "./session.js";
import { toolName } from "../lib/names.js";
import { DEFAULT_CHAR_LIMIT, pagedText, pageOfText, type TextPage } from "../lib/paging.js";
import { releaseRefusedFileFrames } from "./refused-frames.js";

const DOWNLOAD_WAIT_MS = 30_000;
const SNAPSHOT_TIMEOUT_MS = 10_000;

export interface ReplyOptions {
  /** What the tool did, in a line or two. */
  result?: string;
  /** Include the snapshot (default true). */
  snapshot?: boolean;
  offset?: number;
  limit?: number;
  /** Reuse the latest snapshot instead of taking a new one (paging through it). */
  reuse?: boolean;
  /** Add where the snapshot page is as structuredContent (`snapshotPageOutput`): for the snapshot tool, whose output schema has it. */
  pagePosition?: boolean;
}

/** The structured output of a reply with `pagePosition`. */
export function snapshotPosition(url: string, page: TextPage | undefined) {
  return { url, offset: page?.offset ?? 0, totalChars: page?.totalChars ?? 0, nextOffset: page?.nextOffset ?? null };
}

export async function pageReply(b: BrowserSession, options: ReplyOptions = {}): Promise<CallToolResult> {
  await waitDownloads(b);
  await b.leaving;
  const sections: string[] = [];
  if (options.result) sections.push(`### Result\n${options.result}`);

  const page = await b.page({ allowDialog: true });
  if (!b.dialog && options.snapshot !== false && !options.reuse) {
    for (const src of await releaseRefusedFileFrames(page))
      b.notice(`Blocked ${src} in a frame: file: documents are not allowed; open workspace files with navigate.`);
  }
  const tabs = b.tabs();
  const lines = [`- URL: ${page.url()}`];
  if (!b.dialog) lines.push(`- Title: ${await page.title().catch(() => "")}`);
  if (tabs.length > 1) lines.push(`- Tab ${b.currentIndex()} of ${tabs.length} (tabs 0-${tabs.length - 1}; see tabs)`);
  sections.push(`### Page\n${lines.join("\n")}`);

  const notices = b.takeNotices();
  if (notices.length) sections.push(`### Events\n${notices.map((n) => `- ${n}`).join("\n")}`);

  if (b.dialog) {
    sections.push(`### Dialog\n${describeDialog(b.dialog)}. The page is blocked until you answer it with handle_dialog (accept true/false).`);
  }
  let snapshot: TextPage | undefined;
  if (!b.dialog && options.snapshot !== false) {
    let text: string;
    if (options.reuse && b.lastSnapshot && b.lastSnapshot.url === page.url()) {
      text = b.lastSnapshot.text;
    } else {
      text = await page.ariaSnapshot({ mode: "ai", timeout: SNAPSHOT_TIMEOUT_MS });
      b.lastSnapshot = { url: page.url(), text };
    }
    snapshot = pageOfText(text, options.offset ?? 0, options.limit ?? DEFAULT_CHAR_LIMIT);
    sections.push(`### Snapshot\n\`\`\`yaml\n${pagedText(snapshot, toolName("snapshot"))}\n\`\`\``);
  }
  const text = sections.join("\n\n");
  return options.pagePosition ? reply.data(text, snapshotPosition(page.url(), snapshot)) : reply.text(text);
}

async function waitDownloads(b: BrowserSession): Promise<void> {
  const pending = [...b.recorder.pendingDownloads];
  if (!pending.length) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, DOWNLOAD_WAIT_MS)));
  await Promise.race([Promise.allSettled(pending), timeout]);
  clearTimeout(timer);
}
