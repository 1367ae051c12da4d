// Output streamed to the caller as progress notifications, batched so a chatty command sends a
// few notifications a second instead of one per pipe read. `progress` is the running count of
// characters sent, which only grows, as the protocol requires.
import type { ToolContext } from "../lib/tool.js";

const FLUSH_MS = 50;

export class ProgressStream {
  private pending = "";
  private sent = 0;
  private timer?: NodeJS.Timeout;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: ToolContext) {}

  push(text: string): void {
    this.pending += text;
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const message = this.pending;
    this.pending = "";
    this.sent += message.length;
    const progress = this.sent;
    this.chain = this.chain.then(() => this.ctx.progress(progress, undefined, message));
  }

  /** Send what is pending and wait until every notification went out (before the result does). */
  async close(): Promise<void> {
    this.flush();
    await this.chain;
  }
}
