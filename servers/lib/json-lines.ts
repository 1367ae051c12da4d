// MCP's stdio framing: one JSON-RPC message per line. Bytes arrive in chunks that split lines
// anywhere (a multi-byte character included), so a line is decoded only once it is whole. Shared
// by the hub's end of a child's pipes (hub/children/stdio-transport.ts) and a server's own end
// (./stdio-transport.ts).

/** Cuts a byte stream into lines, none longer than `maxLineBytes`. */
export class LineSplitter {
  private partial: Buffer[] = [];
  private partialBytes = 0;

  /**
   * `onLine` gets each whole line (without its newline) and its length in bytes. `onOverflow` is
   * called when a line grows past `maxLineBytes` before it ends: the stream is out of step then, and
   * what was held of the line is dropped, as is the rest of that chunk.
   */
  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string, bytes: number) => void,
    private readonly onOverflow: () => void,
  ) {}

  feed(chunk: Buffer): void {
    let from = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, newline);
      const bytes = this.partialBytes + piece.length;
      const line = this.partialBytes ? Buffer.concat([...this.partial, piece]).toString("utf8") : piece.toString("utf8");
      this.reset();
      from = newline + 1;
      this.onLine(line, bytes);
    }
    if (from === chunk.length) return;
    this.partialBytes += chunk.length - from;
    if (this.partialBytes > this.maxLineBytes) {
      this.reset();
      this.onOverflow();
      return;
    }
    this.partial.push(chunk.subarray(from));
  }

  /** Forget a line begun but not ended. */
  reset(): void {
    this.partial = [];
    this.partialBytes = 0;
  }
}
