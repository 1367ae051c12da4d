// A descriptor opened, checked, read, written and closed by direct system calls, with the part
// of FileHandle's API the file server uses. Each fs.promises operation is a round trip through
// libuv's thread pool: a wake-up of a pool thread and a completion sent back, two context
// switches. A 1 KB file_read made five of them (open, readlink of /proc/self/fd, fstat, read,
// close), and they were more than half of what the file server spent on the call (bench/README.md,
// table 16). Opening (O_NONBLOCK for files, so a FIFO cannot hang it; O_DIRECTORY for folders),
// asking where a descriptor is, fstat, chmod and close take microseconds on a local filesystem,
// so they are done in place; what waits on the disk (fsync) or moves many bytes (over
// IN_PLACE_BYTES) goes to the pool.
import fs from "node:fs";
import { promisify } from "node:util";

/** The part of an open file that readers use: OpenFile's, and FileHandle's too, so a reader takes either. */
export interface ReadableFile {
  readonly fd: number;
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<fs.Stats>;
  readFile(): Promise<Buffer>;
  readFile(encoding: BufferEncoding): Promise<string>;
  createReadStream(options: { encoding?: BufferEncoding; start?: number; end?: number; autoClose: false }): fs.ReadStream;
  close(): Promise<void>;
}

/** Calls made in place between two turns of the event loop, in a loop over a folder's entries: other calls get their turn. */
export const IN_PLACE_CALLS_PER_TURN = 256;

/** Reads and writes up to this many bytes are made in place; longer ones go to the thread pool. */
export const IN_PLACE_BYTES = 256 * 1024;

const readInPool = promisify(fs.read);
const readWholeInPool = promisify(fs.readFile);
const writeInPool = promisify(fs.write);
const fsyncInPool = promisify(fs.fsync);
const ebadf = () => Object.assign(new Error("EBADF: file already closed"), { code: "EBADF" });

type ReadCallback = (err: NodeJS.ErrnoException | null, bytesRead: number, buffer: Buffer) => void;

export class OpenFile implements ReadableFile {
  #fd: number;
  /** Reads, writes and flushes running in the pool: the descriptor is closed only once they are done, so none reaches a file opened later under the same number. */
  #inPool = 0;
  #closeWhenIdle?: number;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** fs.openSync's arguments; throws as it does. */
  static open(file: string, flags: number, mode?: number): OpenFile {
    return new OpenFile(fs.openSync(file, flags, mode));
  }

  /** The descriptor; -1 once closed. */
  get fd(): number {
    return this.#fd;
  }

  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    if (length <= IN_PLACE_BYTES) {
      try {
        return Promise.resolve({ bytesRead: fs.readSync(this.open(), buffer, offset, length, position) });
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.readOffLoop(buffer, offset, length, position);
  }

  /** A read made in the pool whatever its length: for a process whose event loop serves others, as the hub's does. */
  readOffLoop(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }> {
    return this.inPool((fd) => readInPool(fd, buffer, offset, length, position));
  }

  statNow(): fs.Stats {
    return fs.fstatSync(this.open());
  }

  async stat(): Promise<fs.Stats> {
    return this.statNow();
  }

  readFile(): Promise<Buffer>;
  readFile(encoding: BufferEncoding): Promise<string>;
  async readFile(encoding?: BufferEncoding): Promise<Buffer | string> {
    const bytes = this.statNow().size <= IN_PLACE_BYTES ? fs.readFileSync(this.open()) : await this.inPool((fd) => readWholeInPool(fd));
    return encoding ? bytes.toString(encoding) : bytes;
  }

  /** A stream over the file that reads through this object and never closes it: the file is closed by close() alone. */
  createReadStream(options: { encoding?: BufferEncoding; start?: number; end?: number; autoClose: false }): fs.ReadStream {
    const read = (_fd: number, buffer: Buffer, offset: number, length: number, position: number | null, callback: ReadCallback) =>
      void this.readOffLoop(buffer, offset, length, position).then(
        ({ bytesRead }) => callback(null, bytesRead, buffer),
        (err: NodeJS.ErrnoException) => callback(err, 0, buffer),
      );
    return fs.createReadStream("", { ...options, fd: this.open(), fs: { read, close: (_fd: number, callback: (err: null) => void) => callback(null) } });
  }

  /** Write all of `data` at the file's position. */
  async write(data: Buffer): Promise<void> {
    if (data.length <= IN_PLACE_BYTES) {
      const fd = this.open();
      for (let done = 0; done < data.length;) done += fs.writeSync(fd, data, done, data.length - done);
      return;
    }
    await this.inPool(async (fd) => {
      for (let done = 0; done < data.length;) done += (await writeInPool(fd, data, done, data.length - done)).bytesWritten;
    });
  }

  /** Flush to the disk: it waits on the disk, so in the pool. */
  async sync(): Promise<void> {
    await this.inPool((fd) => fsyncInPool(fd));
  }

  /** Its mode and times, set through the descriptor. */
  async chmod(mode: number): Promise<void> {
    fs.fchmodSync(this.open(), mode);
  }

  async utimes(atime: Date, mtime: Date): Promise<void> {
    fs.futimesSync(this.open(), atime, mtime);
  }

  closeNow(): void {
    const fd = this.#fd;
    if (fd < 0) return;
    this.#fd = -1;
    if (this.#inPool > 0) this.#closeWhenIdle = fd;
    else fs.closeSync(fd);
  }

  async close(): Promise<void> {
    this.closeNow();
  }

  /** An operation on the descriptor in the pool, counted so that close waits for it. */
  private async inPool<T>(operation: (fd: number) => Promise<T>): Promise<T> {
    const fd = this.open();
    this.#inPool++;
    try {
      return await operation(fd);
    } finally {
      this.poolDone();
    }
  }

  private poolDone(): void {
    if (--this.#inPool > 0 || this.#closeWhenIdle === undefined) return;
    fs.closeSync(this.#closeWhenIdle);
    this.#closeWhenIdle = undefined;
  }

  private open(): number {
    if (this.#fd < 0) throw ebadf();
    return this.#fd;
  }
}
