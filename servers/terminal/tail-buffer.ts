// Output kept up to a byte cap, oldest bytes dropped first (the tail is what tells you how a
// command ended). Offsets are absolute over everything ever appended, so a reader can keep a
// cursor and learn how much it missed when the cap dropped unread output.
export class TailBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  /** Bytes ever appended. */
  total = 0;

  constructor(readonly cap: number) {}

  /** Absolute offset of the oldest byte still kept (= bytes dropped so far). */
  get start(): number {
    return this.total - this.kept;
  }

  append(chunk: Buffer | string): void {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    if (buf.length === 0) return;
    this.chunks.push(buf);
    this.kept += buf.length;
    this.total += buf.length;
    while (this.kept > this.cap) {
      const excess = this.kept - this.cap;
      const first = this.chunks[0];
      if (first.length <= excess) {
        this.chunks.shift();
        this.kept -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.kept -= excess;
      }
    }
  }

  /** The kept bytes from absolute offset `from` on (clamped to what is still kept). */
  bytes(from = 0): Buffer {
    let skip = Math.max(0, from - this.start);
    const parts: Buffer[] = [];
    for (const chunk of this.chunks) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      parts.push(skip > 0 ? chunk.subarray(skip) : chunk);
      skip = 0;
    }
    return Buffer.concat(parts);
  }

  /** The kept output from `from` on as text; a UTF-8 sequence cut by the cap is dropped, not garbled. */
  text(from = 0): string {
    const buf = this.bytes(from);
    let i = 0;
    while (i < buf.length && i < 4 && (buf[i] & 0xc0) === 0x80) i++;
    return buf.subarray(i).toString("utf8");
  }
}
