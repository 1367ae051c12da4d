// What a session's pages did that the model may ask about later: console output, network
// requests and downloads. Bounded lists, so a chatty page cannot grow the server without end.
import fs from "node:fs";
import path from "node:path";
import type { Download, Page, Request } from "playwright-core";
import { errorMessage } from "../lib/log.js";
import { relativeToWorkspace } from "../lib/workspace.js";

const MAX_ENTRIES = 1000;

/**
 * Where downloads land, under their suggested names (what the agent's file tools expect). The page
 * chose their bytes and names, so the workspace origin serves this folder inert: shown, never run.
 */
export const DOWNLOADS_FOLDER = "downloads";

export interface ConsoleEntry {
  type: string;
  text: string;
  url: string;
  tab: number;
}

export interface NetworkEntry {
  method: string;
  url: string;
  resourceType: string;
  status?: number;
  failure?: string;
  tab: number;
}

function push<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > MAX_ENTRIES) list.splice(0, list.length - MAX_ENTRIES);
}

export class Recorder {
  readonly console: ConsoleEntry[] = [];
  readonly network: NetworkEntry[] = [];
  private readonly byRequest = new WeakMap<Request, NetworkEntry>();
  /** Downloads still being written; a response waits for them so it can name the file. */
  readonly pendingDownloads = new Set<Promise<void>>();

  constructor(
    private readonly workspace: string,
    private readonly tabOf: (page: Page) => number,
    private readonly notice: (text: string) => void,
  ) {}

  attach(page: Page): void {
    page.on("console", (msg) => push(this.console, { type: msg.type(), text: msg.text(), url: page.url(), tab: this.tabOf(page) }));
    page.on("pageerror", (err) => push(this.console, { type: "pageerror", text: errorMessage(err), url: page.url(), tab: this.tabOf(page) }));
    page.on("request", (req) => {
      const entry: NetworkEntry = { method: req.method(), url: req.url(), resourceType: req.resourceType(), tab: this.tabOf(page) };
      this.byRequest.set(req, entry);
      push(this.network, entry);
    });
    page.on("response", (res) => {
      const entry = this.byRequest.get(res.request());
      if (entry) entry.status = res.status();
    });
    page.on("requestfailed", (req) => {
      const entry = this.byRequest.get(req);
      if (entry) entry.failure = req.failure()?.errorText ?? "failed";
    });
    page.on("download", (download) => {
      const saving = this.save(download).finally(() => this.pendingDownloads.delete(saving));
      this.pendingDownloads.add(saving);
    });
  }

  private async save(download: Download): Promise<void> {
    const dir = path.join(this.workspace, DOWNLOADS_FOLDER);
    try {
      fs.mkdirSync(dir, { recursive: true });
      const target = uniquePath(dir, safeName(download.suggestedFilename()));
      await download.saveAs(target);
      const size = fs.statSync(target).size;
      this.notice(`Downloaded ${relativeToWorkspace(this.workspace, target)} (${size} bytes) from ${download.url()}`);
    } catch (err) {
      this.notice(`Download of ${download.url()} failed: ${errorMessage(err)}`);
    }
  }

  clear(): void {
    this.console.length = 0;
    this.network.length = 0;
  }
}

// The page chooses the name: keep it to one plain file name inside downloads/.
function safeName(name: string): string {
  const base = path
    .basename(name)
    .replace(/[\0/\\]/g, "_")
    .replace(/^\.+/, "");
  return base || "download";
}

function uniquePath(dir: string, name: string): string {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; ; i++) {
    const candidate = path.join(dir, i === 0 ? name : `${stem} (${i})${ext}`);
    if (!fs.existsSync(candidate)) return candidate;
  }
}
