// What a person's browser gets at GET / and GET /mcp (a page saying where to go) instead of the
// JSON status or the MCP endpoint's "GET needs an Mcp-Session-Id header". MCP and JSON clients
// never match: they send Accept: application/json or text/event-stream (or */*), or a session id.
// The page holds no data of the hub (no status, no tenant), so it is served before the key check
// and can tell a person without a key how to send one.
import type { Context } from "hono";
import { acceptsMediaType } from "../../servers/lib/media-type.js";

// nothing to run and nothing from elsewhere: the only dynamic text is the request's own origin, escaped
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A browser navigating here: it asks for HTML and for neither of the MCP transports' types. */
export function wantsPage(c: Context): boolean {
  if (c.req.method !== "GET" || c.req.header("mcp-session-id")) return false;
  const accept = c.req.header("accept");
  return acceptsMediaType(accept, "text/html") && !acceptsMediaType(accept, "application/json") && !acceptsMediaType(accept, "text/event-stream");
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export function landingPage(origin: string, keyed: boolean): string {
  const mcp = `${origin}/mcp`;
  const header = keyed ? `, "headers": { "Authorization": "Bearer <key>" }` : "";
  const snippets = [
    [`Claude Code`, `claude mcp add --transport http agentbox ${mcp}${keyed ? ` --header "Authorization: Bearer <key>"` : ""}`],
    [`Any HTTP client's JSON config`, `{ "mcpServers": { "agentbox": { "type": "http", "url": "${mcp}"${header} } } }`],
    [
      `curl (plain JSON, no session needed)`,
      `curl -sS ${mcp} -H 'Content-Type: application/json'${keyed ? ` -H 'Authorization: Bearer <key>'` : ""}` +
        ` \\\n  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`,
    ],
  ];
  const key = keyed
    ? `<p class="key">This hub needs an API key on every request: send <code>Authorization: Bearer &lt;key&gt;</code>
(or <code>X-API-Key: &lt;key&gt;</code>, or <code>?api_key=&lt;key&gt;</code>). The playground asks for it once and keeps it in the tab.</p>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>agentbox</title>
<link rel="icon" href="/playground/favicon.svg" type="image/svg+xml">
<style>
body { font: 15px/1.5 system-ui, sans-serif; color: #1b1f24; background: #f6f7f9; margin: 0; }
main { max-width: 760px; margin: 48px auto; padding: 0 20px; }
h1 { font-size: 24px; margin: 0 0 6px; } h2 { font-size: 15px; margin: 22px 0 6px; }
a { color: #1d4ed8; }
.go { display: inline-block; background: #1d4ed8; color: #fff; padding: 8px 18px; border-radius: 6px; text-decoration: none; font-weight: 600; }
pre, code { font: 13px ui-monospace, Menlo, Consolas, monospace; }
pre { background: #0f172a; color: #e2e8f0; padding: 10px 12px; border-radius: 6px; overflow: auto; white-space: pre-wrap; word-break: break-all; }
.key { background: #fdf3e3; border-left: 3px solid #b45309; padding: 8px 12px; }
</style></head>
<body><main>
<h1>agentbox</h1>
<p>One MCP endpoint for a browser, files, a terminal, document conversion, arXiv search and code execution.
This page is for people; MCP clients connect to the endpoint below.</p>
${key}
<p><a class="go" href="/playground">Open the playground</a> &nbsp;to try every tool from this browser.</p>
<h2>MCP endpoint</h2>
<pre id="endpoint">${escapeHtml(mcp)}</pre>
<p>Also <code>/v1/mcp</code>; the legacy HTTP+SSE transport is at <code>/sse</code>.
Health: <a href="/healthz">/healthz</a>, readiness: <a href="/readyz">/readyz</a>.</p>
<h2>Connect a client</h2>
${snippets.map(([name, text]) => `<p>${escapeHtml(name!)}:</p><pre>${escapeHtml(text!)}</pre>`).join("\n")}
<p>More clients (Claude Desktop and other stdio clients, mcp-remote, agent frameworks) are in the project's docs/clients.md.</p>
</main></body></html>
`;
}

/** The page for a browser at `/`, `/mcp` and `/v1/mcp`; undefined for everyone else, who goes on as before. */
export function landingFor(c: Context, keyed: boolean): Response | Promise<Response> | undefined {
  if (!wantsPage(c)) return undefined;
  return c.html(landingPage(new URL(c.req.url).origin, keyed), 200, {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
    Vary: "Accept",
  });
}
