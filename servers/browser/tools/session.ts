// The session's browser as a whole: tabs, viewport, what the pages logged and requested, the
// browser's identity (and the operator's CDP endpoint), and closing everything.
import { z } from "zod";
import { reply, ToolError } from "../../lib/tool.js";
import { pageReply } from "../response.js";
import { CDP_OFF_MESSAGE } from "../chromium.js";
import { browserTool, chromiumHost } from "../runtime.js";
import { toolName } from "../../lib/names.js";

const tabs = browserTool({
  name: "tabs",
  title: "Tabs",
  description: "List, open, select or close this session's tabs; new/select/close return the current tab's snapshot.",
  input: {
    action: z.enum(["list", "new", "select", "close"]).describe("close defaults to the current tab"),
    index: z.number().int().min(0).optional().describe("For select and close"),
    url: z.string().optional().describe("For new"),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  sparesCurrentTab: ({ action }) => action !== "close",
  async run({ action, index, url }, b) {
    if (action === "new") {
      if (url && !/^(https?:|about:|data:)/.test(url))
        throw new ToolError(`action "new" takes an http(s), about: or data: URL; open file: URLs with ${toolName("navigate")}.`);
      await b.newTab(url);
      return pageReply(b, { result: `Opened tab ${b.currentIndex()}${url ? ` at ${url}` : ""}.` });
    }
    if (action === "select") {
      if (index === undefined) throw new ToolError(`action "select" needs index (see action "list").`);
      const page = b.select(index);
      await page.bringToFront();
      return pageReply(b, { result: `Selected tab ${index}.` });
    }
    if (action === "close") {
      const page = index === undefined ? await b.page({ allowDialog: true }) : b.tabAt(index);
      const closed = b.tabs().indexOf(page);
      await page.close({ runBeforeUnload: false });
      return pageReply(b, { result: `Closed tab ${closed}.` });
    }
    await b.ensureContext();
    const list = await Promise.all(
      b.tabs().map(async (p, i) => ({ index: i, url: p.url(), title: await p.title().catch(() => ""), current: i === b.currentIndex() })),
    );
    const text = list.map((t) => `${t.current ? "*" : " "} ${t.index}: ${t.title || "(no title)"} — ${t.url}`).join("\n") || "No tabs open.";
    return reply.data(text, { tabs: list });
  },
});

const resize = browserTool({
  name: "resize",
  title: "Resize viewport",
  description: "Set the current tab's viewport size in CSS pixels.",
  input: {
    width: z.number().int().min(100).max(7680),
    height: z.number().int().min(100).max(4320),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ width, height }, b) {
    const page = await b.page();
    await page.setViewportSize({ width, height });
    return pageReply(b, { result: `Viewport is now ${width}x${height}.` });
  },
});

const listing = {
  tab: z.number().int().min(0).optional().describe("Only this tab's"),
  limit: z.number().int().min(1).max(1000).default(100).describe("At most this many, the latest"),
  clear: z.boolean().default(false).describe("Forget what is returned"),
};

const consoleMessages = browserTool({
  name: "console_messages",
  title: "Console messages",
  description: "Console messages and uncaught page errors of this session's tabs, oldest first.",
  input: {
    ...listing,
    level: z.enum(["all", "error", "warning", "info", "log", "debug"]).default("all").describe("error includes uncaught page errors"),
  },
  output: { messages: z.array(z.object({ type: z.string(), text: z.string(), url: z.string(), tab: z.number() })) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ tab, limit, clear, level }, b) {
    // an unknown tab would match nothing and read as "no messages": refuse it, listing the tabs
    if (tab !== undefined) b.tabAt(tab);
    const all = b.recorder.console;
    const match = (m: (typeof all)[number]) =>
      (tab === undefined || m.tab === tab) && (level === "all" || m.type === level || (level === "error" && m.type === "pageerror"));
    const messages = all.filter(match).slice(-limit);
    if (clear) for (const m of messages) all.splice(all.indexOf(m), 1);
    const text = messages.map((m) => `[${m.type}] ${m.text}${m.url ? ` (${m.url})` : ""}`).join("\n") || "No console messages.";
    return reply.data(text, { messages });
  },
});

const networkRequests = browserTool({
  name: "network_requests",
  title: "Network requests",
  description: "Network requests of this session's tabs, oldest first, with status or failure.",
  input: { ...listing, includeStatic: z.boolean().default(false).describe("Include images, fonts, stylesheets and media") },
  output: {
    requests: z.array(
      z.object({
        method: z.string(),
        url: z.string(),
        resourceType: z.string(),
        status: z.number().optional(),
        failure: z.string().optional(),
        tab: z.number(),
      }),
    ),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ tab, limit, clear, includeStatic }, b) {
    if (tab !== undefined) b.tabAt(tab);
    const all = b.recorder.network;
    const staticTypes = new Set(["image", "font", "stylesheet", "media"]);
    const requests = all.filter((r) => (tab === undefined || r.tab === tab) && (includeStatic || !staticTypes.has(r.resourceType))).slice(-limit);
    if (clear) for (const r of requests) all.splice(all.indexOf(r), 1);
    const text = requests.map((r) => `${r.method} ${r.url} [${r.resourceType}] → ${r.failure ?? r.status ?? "pending"}`).join("\n") || "No network requests.";
    return reply.data(text, { requests });
  },
});

const info = browserTool({
  name: "info",
  title: "Browser info",
  description: "Browser version, Chromium's pid and this session's tab count; the CDP endpoint if enabled.",
  input: {},
  output: {
    browserVersion: z.string(),
    cdpEnabled: z.boolean().describe("Whether Chromium listens on a CDP port (AGENTBOX_CDP_PORT)."),
    webSocketDebuggerUrl: z.string().optional(),
    cdpPort: z.number().optional(),
    pid: z.number().optional(),
    tabs: z.number(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(_args, b, ctx) {
    await b.ensureContext();
    const host = chromiumHost(ctx);
    const ep = await host.endpoint();
    const browserVersion = ep?.browserVersion ?? (await host.browser()).version();
    const pid = ep?.pid ?? host.pid();
    const data = { browserVersion, cdpEnabled: Boolean(ep), webSocketDebuggerUrl: ep?.webSocketDebuggerUrl, cdpPort: ep?.port, pid, tabs: b.tabs().length };
    const cdp = ep
      ? `CDP endpoint: ${ep.webSocketDebuggerUrl} (set by the operator with AGENTBOX_CDP_PORT; loopback only and browser-wide: every session's pages and cookies are visible there)`
      : CDP_OFF_MESSAGE;
    const notices = b
      .takeNotices()
      .map((n) => `\n${n}`)
      .join("");
    return reply.data(`${browserVersion}\n${cdp}\nChromium pid: ${pid ?? "unknown"}\nThis session has ${data.tabs} tab(s).${notices}`, data);
  },
});

const close = browserTool({
  name: "close",
  title: "Close browser",
  description: "Close this session's browser: all its tabs, cookies and storage. The next browser call starts fresh.",
  input: {},
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(_args, b) {
    await b.close();
    return reply.text("Closed this session's browser context (tabs, cookies, storage).");
  },
});

export default [tabs, resize, consoleMessages, networkRequests, info, close];
