// Reading a recording's file for its download. The hub reads it itself, as root, from the tenant's
// workspace rather than asking the tenant's server for its bytes: a download then neither waits
// behind the tenant's tool calls on the server's one pipe nor needs the server running. Reading as
// root is what makes it dangerous, since the tenant's processes write that folder: the path is built
// by the hub from a checked id (never a name a server gave), every folder on the way and the file
// are opened without following a link, the file must be a regular file with one name, owned by the
// tenant's uid, and only the bytes it held when opened are sent.
import type { OpenFile } from "../../servers/lib/open-file.js";
import path from "node:path";
import { openDirIn, openFileAt } from "../../servers/lib/safe-fs.js";
import { RECORDING_ID, recordingFileName, RECORDINGS_DIR, sessionFolder } from "../../servers/lib/recording-names.js";
import type { RecordingGrant } from "./recordings.js";

export interface OpenRecording {
  handle: OpenFile;
  /** Bytes to send: the file's size when it was opened (a terminal's recording may still grow). */
  size: number;
}

/** The recording's file opened for reading, or why not (a sentence for the person downloading it). */
export async function openRecording(grant: RecordingGrant): Promise<OpenRecording | string> {
  if (!RECORDING_ID.test(grant.id)) return "This recording has no valid name.";
  const folder = path.join(grant.workspace, RECORDINGS_DIR, sessionFolder(grant.session));
  const name = recordingFileName(grant.id, grant.format);
  let dir: OpenFile;
  try {
    dir = await openDirIn(grant.workspace, folder);
  } catch {
    return "This recording's file is not there (its folder was removed or replaced).";
  }
  try {
    const file = await openFileAt(dir, name, name).catch(() => undefined);
    if (!file) return "This recording's file is not there, or was replaced by something that is not a plain file.";
    const { stat } = file;
    if (!stat.isFile() || stat.uid !== grant.uid) {
      await file.handle.close();
      return "This recording's file was replaced by something that is not the recording.";
    }
    return { handle: file.handle, size: stat.size };
  } finally {
    await dir.close();
  }
}

/** The file's first `size` bytes, as a stream that closes the file when done or cancelled. */
export function streamOf(opened: OpenRecording): ReadableStream<Uint8Array> {
  let position = 0;
  const close = () => opened.handle.close().catch(() => undefined);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const want = Math.min(64 * 1024, opened.size - position);
      if (want <= 0) {
        await close();
        return controller.close();
      }
      try {
        const buf = Buffer.alloc(want);
        // the hub serves every tenant: a recording read from a cold disk must not hold its event loop
        const { bytesRead } = await opened.handle.readOffLoop(buf, 0, want, position);
        if (bytesRead === 0) {
          await close();
          return controller.close();
        }
        position += bytesRead;
        controller.enqueue(buf.subarray(0, bytesRead));
      } catch (err) {
        await close();
        controller.error(err);
      }
    },
    cancel: close,
  });
}
