// This page's session's recordings (hub_recordings): a terminal's asciicast replays in the page
// with asciinema-player; a browser's Playwright trace opens in the trace viewer the hub serves
// (/trace-viewer/), in a new tab. The files come from the hub's own /recordings/ links.
import * as AsciinemaPlayer from "asciinema-player";
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";
import { tenantPanel } from "./tenant-panel.js";

/** hub_recordings' entry for one recording (hub/tools/recordings-tool.ts). */
interface RecordingEntry {
  id: string;
  kind: "terminal" | "browser";
  format: string;
  startedAt: string;
  endedAt: string | null;
  bytes: number;
  url: string;
  note?: string;
}

/** Only a link under the hub's own /recordings/ is played: the listing comes from the tenant's servers through the hub. */
function recordingUrl(text: string): string | undefined {
  try {
    const url = new URL(text, location.href);
    return url.origin === location.origin && url.pathname.startsWith("/recordings/") ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export class RecordingsPanel {
  readonly element: HTMLDetailsElement;
  private readonly panel = tenantPanel("recordings", "Recordings of this session", () => void this.refresh(), {
    tool: "hub_recordings",
    scope: "this session's only",
  });
  private replay?: { element: HTMLElement; dispose(): void };

  constructor(private readonly connection: () => Connection | undefined) {
    this.element = this.panel.element;
  }

  refresh(): Promise<void> {
    return this.panel.fill(this.connection(), "hub_recordings", { limit: 100 }, (data) =>
      this.show((data as { recordings?: RecordingEntry[] }).recordings ?? []),
    );
  }

  private show(recordings: RecordingEntry[]): void {
    this.panel.counted(recordings.length);
    replace(
      this.panel.list,
      recordings.length ? null : h("li", { class: "muted" }, "None: terminal_session_create {record: true} or browser_record makes one."),
      ...recordings.map((r) => this.entry(r)),
    );
  }

  private entry(r: RecordingEntry) {
    const url = recordingUrl(r.url);
    const when = new Date(r.startedAt).toLocaleTimeString();
    const open =
      url && r.kind === "browser"
        ? h(
            "a",
            { href: `/trace-viewer/index.html?trace=${encodeURIComponent(url)}`, target: "_blank", rel: "noopener noreferrer", class: "replay" },
            "Open trace",
          )
        : url
          ? h("button", { type: "button", class: "ghost small replay", onclick: () => this.play(r, url) }, "Replay")
          : null;
    return h(
      "li",
      { class: "recording-entry", "data-id": r.id, "data-kind": r.kind },
      h("span", null, `${r.kind} ${when}`),
      h("span", { class: "muted" }, ` ${Math.ceil(r.bytes / 1024)} KiB${r.endedAt ? "" : ", recording"} `),
      open,
      url ? h("a", { href: url, download: "", class: "muted small-print" }, " download") : null,
      r.note ? h("div", { class: "muted small-print" }, r.note) : null,
    );
  }

  /** The terminal's recording, played in an overlay on the page. */
  private play(r: RecordingEntry, url: string): void {
    this.replay?.dispose();
    const screen = h("div", { class: "recording-screen" });
    const close = h("button", { type: "button", class: "ghost small", "data-action": "close-replay" }, "Close");
    const element = h(
      "div",
      { class: "overlay recording-replay", role: "dialog", "aria-label": `Replay of ${r.id}` },
      h("div", { class: "recording-head" }, h("span", null, r.id), close),
      screen,
    );
    document.body.appendChild(element);
    const player = AsciinemaPlayer.create(url, screen, { autoPlay: true, fit: "width", idleTimeLimit: 2 });
    const dispose = () => {
      player.dispose();
      element.remove();
      this.replay = undefined;
    };
    close.addEventListener("click", dispose);
    this.replay = { element, dispose };
  }
}
