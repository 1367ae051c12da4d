// What a running call has printed so far, from its progress notifications: a tool that streams
// output (terminal_exec) sends each new piece as a message without a total, a tool that counts
// (a crawl, "step 3 of 200") sends a status line with one. All of it is kept, not only the last
// message, and stays on screen when the call is cancelled or fails.
import type { Progress } from "@modelcontextprotocol/client";
import { h } from "./dom.js";

/** The page keeps at most this much of one call's output; a longer stream keeps its end. */
const MAX_CHARS = 2_000_000;

export class StreamedOutput {
  readonly element = h("pre", { class: "text stream-output", "data-empty": "" }, "Waiting for output…");
  private text = "";
  private dropped = 0;

  add(progress: Progress): void {
    if (!progress.message) return;
    // a counting tool's message is a whole line; a streaming tool's is a piece of its output
    const piece = progress.total ? `${progress.message}\n` : progress.message;
    const stick = this.element.scrollTop + this.element.clientHeight >= this.element.scrollHeight - 24;
    if (this.empty) {
      this.element.removeAttribute("data-empty");
      this.element.textContent = "";
    }
    this.text += piece;
    if (this.text.length > MAX_CHARS) {
      this.dropped += this.text.length - MAX_CHARS;
      this.text = this.text.slice(-MAX_CHARS);
      this.element.textContent = `[${this.dropped} earlier characters not kept]\n${this.text}`;
    } else {
      // appended, not rewritten: a chatty command sends many pieces
      this.element.append(piece);
    }
    if (stick) this.element.scrollTop = this.element.scrollHeight;
  }

  get empty(): boolean {
    return this.text === "";
  }

  /** The output after a cancel or a failure: shown open, since it is all there is. */
  kept(): HTMLElement | null {
    return this.empty
      ? null
      : h("section", { class: "content-block kind-stream" }, h("div", { class: "block-head" }, h("span", { class: "tag" }, "streamed output")), this.element);
  }

  /** The output next to a result, which usually holds it too: folded away. */
  folded(): HTMLElement | null {
    return this.empty
      ? null
      : h("details", { class: "raw stream-fold" }, h("summary", null, `Streamed output (${this.text.length + this.dropped} characters)`), this.element);
  }
}
