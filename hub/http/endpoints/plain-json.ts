// Requests outside any Streamable HTTP session, answered as plain JSON: a script POSTing JSON-RPC
// without initialize (the implicit session of its tenant and address), and code run for a
// session calling the hub's tools back as that session (./callback.ts). A plain tools/call is
// answered directly (./direct-call.ts); anything else by an SDK server made for this one request.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { HubServices } from "../services.js";
import type { ParsedBody } from "../../protocol/jsonrpc.js";
import { urlSelects, viewForUrl } from "../../catalog/selection.js";
import type { Caller } from "../security.js";
import { carryingBase, connectSessionServer } from "../../sessions/server.js";
import type { RequestBase } from "../../previews/public-address.js";
import type { ClientSession } from "../../sessions/registry.js";
import { answerToolCall, cancelsDirectCall, isDirectToolCall } from "./direct-call.js";
import { sseToJson, withFullAccept } from "./sse-to-json.js";

type Parsed = Extract<ParsedBody, { ok: true }>;

/**
 * `base`: the address the request came by (hub/previews/public-address.ts).
 * `caller`: the person's sign-in, whose grant narrows the view and whose too narrow scopes get 403; none for code calling back.
 */
export async function answerPlainJson(
  hub: HubServices,
  req: Request,
  parsed: Parsed,
  session: ClientSession,
  base: RequestBase,
  caller?: Caller,
): Promise<Response> {
  session.touch();
  // selection hook (hub/catalog/selection.ts): a plain JSON request may narrow its session's selection for itself, as its sign-in does
  const selected = urlSelects(req.url) ? viewForUrl(session.view, req.url, (parsed.body as { id?: string | number }).id) : session.view;
  if (selected instanceof Response) return selected;
  const view = selected.within(caller?.grant);
  const outOfScope = caller?.refuseScope(view, parsed.body);
  if (outOfScope) return outOfScope;
  if (isDirectToolCall(parsed.body, req.headers, session)) return answerToolCall(hub, session, view, parsed.body, req, base);
  if (cancelsDirectCall(parsed.body, session)) return new Response(null, { status: 202 });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: hub.config.maxBodyBytes,
  });
  const server = await connectSessionServer(hub, session, transport, view);
  try {
    const res = await transport.handleRequest(withFullAccept(req, parsed.text), { parsedBody: parsed.body, authInfo: carryingBase(base) });
    return await sseToJson(res, Array.isArray(parsed.body));
  } finally {
    void server.close();
  }
}
