// What the hub puts in front of the trace viewer's service worker (sw.bundle.js, playwright-core's
// own, served after this). That worker draws a trace's DOM snapshots as pages of the hub's origin,
// under /trace-viewer/snapshot/, in frames that may run scripts and share the origin (the viewer's
// sandbox is "allow-scripts allow-same-origin"). Its Content-Security-Policy lets only its own
// nonce'd script run, but a snapshot is HTML the agent chose: the recorded page can rewrite what
// Playwright's snapshotter records (it runs in the page's own world), and ?trace= may name any file.
// Such a snapshot can still hold a frame, or a <meta> refresh, that loads another page of this
// origin where the agent's script does run (a preview in the path form), and that page could read
// what the person's tab keeps (the playground's key). A response a service worker makes never gets
// the hub's headers, so this code adds a second policy to each snapshot the worker answers: frames
// only of other snapshots (or Playwright's blank data: frame, which takes the snapshot's policy),
// and no form submits. A page's own navigation is ruled by its parent's frame-src: the viewer's
// pages (./trace-viewer.ts) rule the top snapshot, this policy the snapshots framed in it.
//
// It wraps the worker's fetch listeners as they are added, so the worker itself is served as
// Playwright wrote it; test/hub/previews/trace-viewer-attack.test.ts fails if a new playwright-core
// answers snapshots some other way.
export const SNAPSHOT_HARDENING = `// agentbox: a second Content-Security-Policy on every DOM snapshot (hub/playground/trace-viewer-sw.ts)
(() => {
  const snapshots = self.registration.scope + "snapshot/";
  const policy = "frame-src " + snapshots + " data:; form-action 'none'";
  const harden = (response) => {
    // a network error or an opaque answer is no page
    if (!response || response.status === 0) return response;
    const headers = new Headers(response.headers);
    headers.append("Content-Security-Policy", policy);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
  const listen = self.addEventListener.bind(self);
  self.addEventListener = (type, listener, options) => {
    if (type !== "fetch" || !listener) return listen(type, listener, options);
    const wrapped = (event) => {
      if (event.request.url.startsWith(snapshots)) {
        const respondWith = event.respondWith.bind(event);
        Object.defineProperty(event, "respondWith", { value: (answer) => respondWith(Promise.resolve(answer).then(harden)) });
      }
      return typeof listener === "function" ? listener.call(self, event) : listener.handleEvent(event);
    };
    return listen(type, wrapped, options);
  };
})();
`;
