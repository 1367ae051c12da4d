// Capturing what a cell prints: capped with the tail kept (the end of a long log is what tells
// what happened), and cut at the driver's end marker so each execute gets exactly its output.

/** Text capped at `max` characters, keeping the last ones. */
export class TailBuffer {
  private parts: string[] = [];
  private length = 0;
  private dropped = 0;

  constructor(private readonly max: number) {}

  push(text: string): void {
    if (!text) return;
    this.parts.push(text);
    this.length += text.length;
    // compact now and then rather than on every chunk
    if (this.length > this.max * 2) this.compact();
  }

  private compact(): void {
    const all = this.parts.join("");
    const keep = all.slice(Math.max(0, all.length - this.max));
    this.dropped += all.length - keep.length;
    this.parts = [keep];
    this.length = keep.length;
  }

  get truncated(): boolean {
    return this.dropped > 0 || this.length > this.max;
  }

  text(): string {
    this.compact();
    return this.dropped > 0 ? `[… ${this.dropped} characters omitted …]\n${this.parts[0]}` : (this.parts[0] ?? "");
  }
}

/** Cap a single string the same way. */
export function capTail(text: string, max: number): string {
  const buffer = new TailBuffer(max);
  buffer.push(text);
  return buffer.text();
}

/** One stream (stdout or stderr) of one execute: collects until the end marker shows up. */
export class StreamCapture {
  readonly buffer: TailBuffer;
  private carry = "";
  done = false;
  private resolveDone!: () => void;
  readonly finished = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly marker: string,
    max: number,
  ) {
    this.buffer = new TailBuffer(max);
  }

  feed(chunk: string): void {
    if (this.done) return;
    const text = this.carry + chunk;
    const at = text.indexOf(this.marker);
    if (at >= 0) {
      this.buffer.push(text.slice(0, at));
      this.carry = "";
      this.finish();
      return;
    }
    // hold back what could be the start of a marker split across chunks
    const safe = Math.max(0, text.length - (this.marker.length - 1));
    this.buffer.push(text.slice(0, safe));
    this.carry = text.slice(safe);
  }

  /** The process ended or was killed: keep what arrived. */
  finish(): void {
    if (this.done) return;
    this.buffer.push(this.carry);
    this.carry = "";
    this.done = true;
    this.resolveDone();
  }
}
