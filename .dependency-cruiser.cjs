// The architecture gate (`npm run lint`, part of `npm test`): no import circle anywhere, type-only
// imports included, and the hub's rooms importing only the rooms below them. Layers, bottom up; a
// room may import any room on a lower layer and nothing on its own layer or above:
//   0  protocol, observability, playground   JSON-RPC replies and cancellation; metrics; the playground page
//   1  config                                the configuration file, environment and schema
//   2  children                              child processes, their transports, calls and queue
//   3  catalog                               the merged catalog, selection, tool search
//   4  tenants                               tenants, isolation, process sweeps, disk budgets
//   5  previews                              links under the hub's address: previews of apps tenants serve, recordings' downloads
//   6  live                                  live views of tenants' tabs and terminals: tokens, streams, viewers, the page
//   7  sessions                              client sessions, the 2025 session server, the call pipeline, calls that outlive their request
//   8  tasks                                 tool calls run as tasks, both eras (the 2026 tasks extension's requests included)
//   9  modern                                the 2026-07-28 revision: its endpoint, per-request server, direct path, input_required, listen streams, parameter headers
//  10  tools                                 the hub's own tools (hub_*)
//  11  http                                  the HTTP front: app, security, endpoints, event store
// and the top (hub/main.ts, hub/hub.ts the composition root, hub/stdio.ts), which nothing imports.
// Servers import only servers/lib and their own folder.
const layers = [
  ["protocol", "observability", "playground"],
  ["config"],
  ["children"],
  ["catalog"],
  ["tenants"],
  ["previews"],
  ["live"],
  ["sessions"],
  ["tasks"],
  ["modern"],
  ["tools"],
  ["http"],
];

const roomRules = layers.map((rooms, level) => {
  const sameOrAbove = layers.slice(level).flat();
  return {
    name: `rooms-${rooms.join("-")}`,
    comment: `hub/${rooms.join(", hub/")} may import only rooms below them: move the shared type down, or pass it in`,
    severity: "error",
    from: { path: `^hub/(${rooms.join("|")})/` },
    to: { path: [`^hub/(${sameOrAbove.join("|")})/`, "^hub/[^/]+\\.ts$"], pathNot: "^hub/$1/" },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import circle makes a module unreadable on its own; type-only imports count too.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...roomRules,
    {
      name: "composition-root-imported-by-nobody",
      comment: "hub/hub.ts builds everything; code below receives what it needs instead of importing it.",
      severity: "error",
      from: { pathNot: "^(hub/main\\.ts|test/|bench/)" },
      to: { path: "^hub/hub\\.ts$" },
    },
    {
      name: "servers-import-only-lib",
      comment: "A server imports only servers/lib and its own folder: move what two servers share into servers/lib.",
      severity: "error",
      from: { path: "^servers/([^/]+)/" },
      to: { path: "^(servers/|hub/)", pathNot: ["^servers/lib/", "^servers/$1/"] },
    },
    {
      name: "lib-imports-only-lib",
      comment: "servers/lib is shared by every server and the hub: it imports no server.",
      severity: "error",
      from: { path: "^servers/lib/" },
      to: { path: "^(servers/|hub/)", pathNot: "^servers/lib/" },
    },
    {
      name: "product-never-imports-tests",
      severity: "error",
      from: { path: "^(hub|servers)/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "^(dist|node_modules)/" },
  },
};
