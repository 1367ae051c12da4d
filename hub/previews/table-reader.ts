// The kernel's socket tables, read on a thread of their own. /proc/net/tcp lists every socket of
// the machine, TIME_WAIT ones included, and the kernel writes it a page at a time: with tens of
// thousands of sockets (a tenant can hold that many) one read takes tens of milliseconds of
// blocking, or hundreds when done as many small reads through libuv's pool. On a worker the read
// blocks no one; it sends back only the lines that can name the port asked about.
import { Worker } from "node:worker_threads";

// self-contained (a worker from source text): nothing of the bundle is reachable from it
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
parentPort.on("message", ({ id, files, mention }) => {
  const tables = files.map((file) => {
    let text;
    try {
      text = fs.readFileSync(file, "latin1");
    } catch {
      return "";
    }
    const lines = text.split("\\n");
    return [lines[0], ...lines.slice(1).filter((line) => line.includes(mention))].join("\\n");
  });
  parentPort.postMessage({ id, tables });
});
`;

type Pending = { resolve: (tables: string[]) => void; reject: (err: Error) => void };

/** Reads of whole tables on one worker thread, started on first use and again after it fails. */
export class TableReader {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** `source`: the thread's program (a test gives one that fails on cue). */
  constructor(private readonly source = WORKER_SOURCE) {}

  /** Each file's header line and the lines holding `mention`, in the order of `files`. */
  read(files: readonly string[], mention: string): Promise<string[]> {
    const worker = this.started();
    const id = this.nextId++;
    // held while a read is awaited, let go when none is: a reader waiting for work keeps no hub alive
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, files, mention });
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.source, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    worker.on("message", ({ id, tables }: { id: number; tables: string[] }) => {
      this.pending.get(id)?.resolve(tables);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
    });
    const failed = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(err);
      this.pending.clear();
    };
    worker.on("error", failed);
    worker.on("exit", (code) => failed(new Error(`the socket table reader ended (code ${code})`)));
    this.worker = worker;
    return worker;
  }
}
