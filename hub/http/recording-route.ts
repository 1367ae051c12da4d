// Where recordings' downloads (hub/previews/recordings.ts) meet the HTTP front: `GET
// /recordings/<token>/<file>`, taken before CORS, the Host/Origin policy and the API key, like a
// preview (the token in the URL is the credential). An unknown or altered token gets 404, an ended
// one 410, a file that is no longer the recording 404: each a line of text and nothing of the file.
// The file is the tenant's content: it is sent as a download, sandboxed and never sniffed, so
// opened in a browser it cannot run as a page of the hub's origin.
import type { MiddlewareHandler } from "hono";
import { recordingFileName, type RecordingFormat } from "../../servers/lib/recording-names.js";
import { openRecording, streamOf } from "../previews/recording-files.js";
import { tokenOfRecordingPath, type RecordingLinks } from "../previews/recordings.js";
import type { HubEnv } from "./security.js";

const TYPES: Record<RecordingFormat, string> = { asciicast: "application/x-asciicast", "playwright-trace": "application/zip" };
const SAFE = { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox", "Referrer-Policy": "no-referrer" };

const refuse = (status: number, text: string) => new Response(`${text}\n`, { status, headers: { ...SAFE, "Content-Type": "text/plain; charset=utf-8" } });

export function recordingRoute(links: RecordingLinks): MiddlewareHandler<HubEnv> {
  return async (c, next) => {
    if (!c.req.path.startsWith("/recordings/")) return next();
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return refuse(405, "Recordings are downloaded with GET.");
    const token = tokenOfRecordingPath(c.req.path);
    const found = token ? links.lookup(token) : undefined;
    const gone = "Ask the agent for its recordings again (hub_recordings).";
    if (!found) return refuse(404, `Recording not found: this URL names no recording. ${gone}`);
    if ("ended" in found) return refuse(410, `This recording's link has ended (${found.ended}). ${gone}`);
    const grant = found.preview;
    const name = recordingFileName(grant.id, grant.format);
    if (!c.req.path.endsWith(`/${name}`)) return refuse(404, `Recording not found: this URL names no recording. ${gone}`);
    const opened = await openRecording(grant);
    if (typeof opened === "string") return refuse(404, opened);
    const headers = {
      ...SAFE,
      "Content-Type": TYPES[grant.format],
      "Content-Length": String(opened.size),
      "Content-Disposition": `attachment; filename="${name}"`,
    };
    if (c.req.method === "HEAD") {
      await opened.handle.close();
      return new Response(null, { headers });
    }
    return new Response(streamOf(opened), { headers });
  };
}
