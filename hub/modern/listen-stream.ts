// A subscriptions/listen answered by the SDK, with something held for exactly as long as its
// stream is open: taken before the SDK acknowledges the stream, let go when the stream ends, the
// client goes away, or the SDK refuses the listen.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../servers/lib/log.js";
import { jsonRpcError, withoutCodePrefix } from "../protocol/jsonrpc.js";
import { mediaTypeOf } from "../../servers/lib/media-type.js";

export async function whileStreaming(id: unknown, take: () => Promise<() => void>, serve: () => Promise<Response>): Promise<Response> {
  let release: () => void;
  try {
    release = await take();
  } catch (err) {
    // in-band, as the SDK refuses a listen it cannot serve: the client sees why before any ack
    const code = err instanceof McpError ? err.code : -32602;
    const requestId = typeof id === "string" || typeof id === "number" ? id : null;
    return jsonRpcError(200, code, `This listen's resourceSubscriptions cannot be served: ${withoutCodePrefix(errorMessage(err))}`, { id: requestId });
  }
  let released = false;
  const done = () => {
    if (released) return;
    released = true;
    release();
  };
  let response: Response;
  try {
    response = await serve();
  } catch (err) {
    done();
    throw err;
  }
  if (!response.body || mediaTypeOf(response.headers.get("content-type")) !== "text/event-stream") {
    done();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: ended } = await reader.read();
        if (ended) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        done();
        controller.error(err);
      }
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
