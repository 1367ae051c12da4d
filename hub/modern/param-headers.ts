// The Mcp-Param-* headers of a 2026-07-28 tools/call (SEP-2243): an argument the tool's listed
// inputSchema marks `x-mcp-header: Name` is mirrored by the client into `Mcp-Param-Name`, and a
// router may act on the header alone (deploy/nginx routes Mcp-Param-Context to the replica named
// at a context handle's start). So the header and the body must agree, or the request is refused
// before it runs: a header that says one thing while the body does another would route a call to
// one place and run it as something else. The SDK's createMcpHandler checks this only for the
// high-level McpServer; the hub's factory returns a low-level Server, so the hub checks it here,
// by the same rules (see the SDK's validateMcpParamHeaders):
// - a value in the body needs its header, which must decode to the same value (numbers compare
//   numerically, booleans as "true"/"false"); a header whose body value is absent or null is ignored;
// - a value wrapped as `=?base64?…?=` is canonical Base64 of UTF-8, else refused;
// - a refusal is -32020 (HeaderMismatch), HTTP 400, naming the header and what the body says.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { SessionView } from "../catalog/selection.js";
import { isPlainObject, jsonRpcError } from "../protocol/jsonrpc.js";

export const HEADER_MISMATCH = -32020;
const PREFIX = "Mcp-Param-";
const SENTINEL_START = "=?base64?";
const SENTINEL_END = "?=";
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

interface Declaration {
  path: string[];
  header: string;
  type?: string;
}

/** Each listed tool's declarations, found once per listing (a rebuilt catalog lists new objects). */
const declarationsOf = new WeakMap<Tool, Declaration[]>();

/** The x-mcp-header declarations reachable through `properties` alone, the only place the revision allows them. */
function declarations(tool: Tool): Declaration[] {
  let found = declarationsOf.get(tool);
  if (found) return found;
  found = [];
  const visit = (schema: unknown, path: string[]) => {
    if (typeof schema !== "object" || schema === null) return;
    const node = schema as Record<string, unknown>;
    const header = node["x-mcp-header"];
    if (path.length > 0 && typeof header === "string" && header !== "") {
      found!.push({ path, header, type: typeof node.type === "string" ? node.type : undefined });
    }
    const properties = node.properties;
    if (typeof properties === "object" && properties !== null) for (const [key, child] of Object.entries(properties)) visit(child, [...path, key]);
  };
  visit(tool.inputSchema, []);
  declarationsOf.set(tool, found);
  return found;
}

function valueAt(root: unknown, path: string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A body value as its header carries it; undefined for a value no header can carry (objects, non-finite or unsafe numbers). */
function asHeaderText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number" && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/** A header's value, its Base64 sentinel decoded; undefined when the sentinel wraps anything but canonical Base64 of UTF-8. */
function decoded(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END) && value.length >= SENTINEL_START.length + SENTINEL_END.length)) return value;
  const base64 = value.slice(SENTINEL_START.length, value.length - SENTINEL_END.length);
  if (!CANONICAL_BASE64.test(base64)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(base64, "base64"));
  } catch {
    return undefined;
  }
}

/** What is wrong with one declared header, or undefined when it agrees with the body. */
function disagreement(declaration: Declaration, args: unknown, headers: Headers): string | undefined {
  const header = `${PREFIX}${declaration.header}`;
  const body = valueAt(args, declaration.path);
  const expected = body === null ? undefined : asHeaderText(body);
  if (expected === undefined) return undefined;
  const argument = `${declaration.path.join(".")}=${JSON.stringify(body)}`;
  const given = headers.get(header);
  if (given === null) return `the body carries ${argument} but the ${header} header is absent; send the argument's value in it too`;
  const value = decoded(given);
  if (value === undefined) return `the ${header} header carries an invalid Base64 value (=?base64?…?= must wrap canonical Base64 of UTF-8 text)`;
  const numeric = (declaration.type === "integer" || declaration.type === "number") && typeof body === "number" && DECIMAL.test(value);
  if (numeric ? Number(value) === body : value === expected) return undefined;
  return `the ${header} header says ${JSON.stringify(value)} but the body carries ${argument}; they must be the same`;
}

/**
 * The -32020 refusal of a 2026-07-28 tools/call whose Mcp-Param-* headers disagree with its
 * arguments, by the named tool's listed schema; undefined for anything else (another method, a
 * tool the hub does not know, which the call itself refuses).
 */
export function paramHeaderMismatch(req: Request, body: unknown, view: SessionView): Response | undefined {
  if (!isPlainObject(body) || body.method !== "tools/call" || !isPlainObject(body.params) || typeof body.params.name !== "string") return undefined;
  const tool = view.listed(body.params.name);
  if (!tool) return undefined;
  for (const declaration of declarations(tool)) {
    const problem = disagreement(declaration, body.params.arguments, req.headers);
    if (problem === undefined) continue;
    const id = typeof body.id === "string" || typeof body.id === "number" ? body.id : null;
    return jsonRpcError(400, HEADER_MISMATCH, `Bad Request: the request headers and body disagree: ${problem}.`, {
      id,
      data: { mismatch: { header: `${PREFIX}${declaration.header}`, body: problem } },
    });
  }
  return undefined;
}
