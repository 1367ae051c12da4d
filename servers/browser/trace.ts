// A session's browser recorded as a Playwright trace: every action, a screenshot film strip and a
// DOM snapshot per step, network and console, in one .zip that Playwright's trace viewer opens (the
// hub serves the viewer, so the playground replays it in the page). A trace needs no video encoder,
// which Debian's Chromium and playwright-core lack (Playwright's recordVideo wants its own ffmpeg).
// Playwright writes the file only when the trace stops: when the agent stops it (browser_record),
// or the session's browser closes (browser_close, the session's end, the idle limit).
import fsp from "node:fs/promises";
import type { BrowserContext } from "playwright-core";
import { readDiskUse, usedUp } from "../lib/disk-budget.js";
import { errorMessage, type Logger } from "../lib/log.js";
import { BUDGET_NOTE, planRecording, type Recording } from "../lib/recordings.js";

export class BrowserTrace {
  private constructor(
    private readonly context: BrowserContext,
    readonly recording: Recording,
    private readonly log: Logger,
  ) {}

  /** Start tracing a context (all its tabs) from now on. */
  static async start(context: BrowserContext, workspace: string, session: string, log: Logger): Promise<BrowserTrace> {
    const recording = await planRecording(workspace, session, "browser", "playwright-trace");
    await context.tracing.start({ screenshots: true, snapshots: true, title: `browser ${recording.id}` });
    log.info("browser recorded", { session, recording: recording.id });
    return new BrowserTrace(context, recording, log);
  }

  /**
   * Stop and write the trace. With the disk budget used up nothing is written and the recording
   * says why; a write the budget stops half way is removed. Never throws.
   */
  async stop(): Promise<void> {
    if (!this.recording.active) return;
    const use = await readDiskUse();
    try {
      if (use && usedUp(use)) {
        await this.context.tracing.stop();
        return this.recording.saved(0, `${BUDGET_NOTE} The trace was not written.`);
      }
      await this.context.tracing.stop({ path: this.recording.file });
      const { size } = await fsp.lstat(this.recording.file);
      this.recording.saved(size);
    } catch (err) {
      const space = /EFBIG|ENOSPC|EDQUOT|File too large|no space/i.test(errorMessage(err));
      await fsp.rm(this.recording.file, { force: true }).catch(() => undefined);
      this.recording.saved(0, space ? `${BUDGET_NOTE} The trace was not written.` : `The trace was not written: ${errorMessage(err)}.`);
      this.log.warn("browser trace not written", { recording: this.recording.id, error: errorMessage(err) });
    }
  }

  /** Chromium went away with the context: nothing of the trace can be written. */
  lost(): void {
    if (this.recording.active) this.recording.saved(0, "The trace was lost: Chromium stopped while recording.");
  }
}
