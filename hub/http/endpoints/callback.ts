// Code run for a session (the code server's interpreters, through their tool bridges) calling the
// hub's tools as that session: the session token already named the session (hub/http/security.ts), so
// this is a plain JSON request of that session, and only POST makes sense.
import type { HubServices } from "../services.js";
import { jsonRpcError, type ParsedBody } from "../../protocol/jsonrpc.js";
import type { ClientSession } from "../../sessions/registry.js";
import { answerPlainJson } from "./plain-json.js";
import type { RequestBase } from "../../previews/public-address.js";

export async function answerCallback(
  hub: HubServices,
  req: Request,
  session: ClientSession,
  base: RequestBase,
  readBody: () => Promise<ParsedBody>,
): Promise<Response> {
  if (req.method !== "POST") return jsonRpcError(405, -32000, "Only POST is supported for internal calls.");
  const parsed = await readBody();
  if (!parsed.ok) return parsed.response;
  return answerPlainJson(hub, req, parsed, session, base);
}
