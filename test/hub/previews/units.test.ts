// The previews room's parts on their own: the kernel's socket tables as Linux writes them (lines
// copied from this machine's /proc/net/tcp and tcp6, and a live socket found by its owner), tokens
// in paths and hosts, what crosses the proxy, cookie jars, and the store's ends and bounds.
import assert from "node:assert/strict";
import net from "node:net";
import { afterEach, describe, mock, test } from "node:test";
import { cookieJar, cookiesFromApp, cookiesToApp } from "../../../hub/previews/cookies.js";
import { fromApp, pathToApp, toApp } from "../../../hub/previews/headers.js";
import { listeningSockets, ownSocketInodes, parseListening, readListening, type ListeningSocket } from "../../../hub/previews/listening-sockets.js";
import { FreshReads, PortAccessCheck } from "../../../hub/previews/port-access.js";
import { PreviewStore, type Preview } from "../../../hub/previews/store.js";
import { newToken, tokenOfHost, tokenOfPath } from "../../../hub/previews/token.js";
import { systemClock } from "../../../hub/protocol/clock.js";

const TCP = [
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "   0: 0100007F:94E3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 142149 1 00000000b32a3d45 100 0 0 10 0",
  "   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 582 1 0000000021ee5497 100 0 0 10 0",
  // an established connection is no listener
  "   2: 0100007F:94E3 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000     0        0 142150 1 0000000000000000 20 4 30 10 -1",
].join("\n");
const TCP6 = [
  "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "   0: 00000000000000000000000001000000:A5DF 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 139171 1 0000000031ef74a0 100 0 0 10 0",
  "   1: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 40123        0 145801 1 00000000bc5f523c 100 0 0 10 0",
].join("\n");

describe("listening sockets from /proc/net/tcp*", () => {
  test("real lines: address, port, owner uid and inode of LISTEN sockets only", () => {
    assert.deepEqual(parseListening(TCP, 4), [
      { address: "127.0.0.1", port: 0x94e3, uid: 0, inode: "142149", family: 4 },
      { address: "0.0.0.0", port: 2024, uid: 1000, inode: "582", family: 4 },
    ]);
    assert.deepEqual(parseListening(TCP6, 6), [
      { address: "::1", port: 0xa5df, uid: 0, inode: "139171", family: 6 },
      { address: "::", port: 8080, uid: 40123, inode: "145801", family: 6 },
    ]);
    assert.deepEqual(parseListening(TCP, 4, 0x94e3), [parseListening(TCP, 4)[0]], "one port's only");
    assert.deepEqual(parseListening(TCP6, 6, 0x1f90), [parseListening(TCP6, 6)[1]]);
    assert.deepEqual(parseListening(TCP, 4, 0x0a), []);
    assert.deepEqual(parseListening("header only\n", 4), []);
    assert.deepEqual(parseListening("h\n   0: garbage\n", 4), []);
  });

  test("a socket this process listens on is found, owned by its uid, and known as its own", async () => {
    const server = net.createServer().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      const { port } = server.address() as net.AddressInfo;
      const found = listeningSockets(port);
      assert.equal(found.length, 1);
      assert.equal(found[0].uid, process.getuid!());
      assert.ok(ownSocketInodes().has(found[0].inode));
      assert.deepEqual(await readListening(port), found, "the read off the event loop finds the same");
      // the hub's own sockets are never previewed, whoever asks
      assert.deepEqual(await new PortAccessCheck(systemClock).check(port, process.getuid!()), { ok: false, why: "the hub's own" });
    } finally {
      server.close();
    }
  });

  test("access goes to the tenant's own socket's address, never another uid's", async () => {
    const sockets = [
      { address: "127.0.0.1", port: 5000, uid: 2001, inode: "1", family: 4 as const },
      { address: "::1", port: 5000, uid: 2002, inode: "2", family: 6 as const },
      { address: "::", port: 6000, uid: 2002, inode: "3", family: 6 as const },
    ];
    const check = new PortAccessCheck(systemClock, async (port) => sockets.filter((s) => s.port === port));
    assert.deepEqual(await check.check(5000, 2001), { ok: true, host: "127.0.0.1", inode: "1" });
    assert.deepEqual(await check.check(5000, 2002), { ok: true, host: "::1", inode: "2" });
    assert.deepEqual(await check.check(5000, 2003), { ok: false, why: "another user's" });
    assert.deepEqual(await check.check(6000, 2002), { ok: true, host: "::1", inode: "3" });
    assert.deepEqual(await check.check(7000, 2002), { ok: false, why: "nothing listens" });
  });

  test("one reading of a port serves for 250 ms; a fresh check, or one after, reads again", async () => {
    mock.timers.enable({ apis: ["Date"], now: 1_000_000 });
    try {
      const asked: number[] = [];
      let sockets = [{ address: "127.0.0.1", port: 5000, uid: 2001, inode: "1", family: 4 as const }];
      const check = new PortAccessCheck(systemClock, async (port) => (asked.push(port), sockets.filter((s) => s.port === port)));
      assert.equal((await check.check(5000, 2001)).ok, true);
      sockets = [];
      mock.timers.tick(250);
      assert.equal((await check.check(5000, 2001)).ok, true, "a page's burst of requests shares one reading");
      assert.deepEqual(asked, [5000]);
      assert.deepEqual(await check.check(6000, 2001), { ok: false, why: "nothing listens" }, "another port has a reading of its own");
      assert.deepEqual(await check.check(5000, 2001, true), { ok: false, why: "nothing listens" }, "an agent's own check reads the tables now");
      sockets = [{ address: "127.0.0.1", port: 5000, uid: 2001, inode: "1", family: 4 as const }];
      mock.timers.tick(251);
      assert.equal((await check.check(5000, 2001)).ok, true, "past 250 ms the tables are read again");
      assert.deepEqual(asked, [5000, 6000, 5000, 5000]);
    } finally {
      mock.timers.reset();
    }
  });

  test("past 250 ms a reading that found the tenant's socket still routes while a new one is made; one that found none does not", async () => {
    let now = 1_000_000;
    const clock = { ...systemClock, now: () => now };
    const asked: Array<(sockets: ListeningSocket[]) => void> = [];
    const check = new PortAccessCheck(clock, () => new Promise((done) => asked.push(done)));
    const own = { address: "127.0.0.1", port: 5000, uid: 2001, inode: "1", family: 4 as const };
    const first = check.check(5000, 2001);
    asked.shift()!([own]);
    assert.equal((await first).ok, true);
    now += 1000;
    assert.deepEqual(await check.check(5000, 2001), { ok: true, host: "127.0.0.1", inode: "1" }, "answered at once from the older reading");
    assert.equal(asked.length, 1, "and a new reading is under way behind it");
    assert.equal((await check.check(5000, 2001)).ok, true);
    assert.equal(asked.length, 1, "one new reading, however many ask meanwhile");
    asked.shift()!([]);
    await new Promise(setImmediate);
    now += 1000;
    const waiting = check.check(5000, 2001);
    assert.equal(asked.length, 1, "a reading that found nothing is not trusted past 250 ms: the check waits for a new one");
    asked.shift()!([own]);
    assert.equal((await waiting).ok, true);
    now += 6000;
    const old = check.check(5000, 2001);
    assert.equal(asked.length, 1, "past 5 s no reading routes a request");
    asked.shift()!([]);
    assert.deepEqual(await old, { ok: false, why: "nothing listens" });
  });

  test("readings are kept for a bounded number of ports: an agent asking about every port grows nothing", async () => {
    const clock = { ...systemClock, now: () => 1_000_000 };
    const asked: number[] = [];
    const check = new PortAccessCheck(clock, async (port) => (asked.push(port), []));
    for (let port = 1; port <= 2000; port++) await check.check(port, 2001);
    asked.length = 0;
    await check.check(2000, 2001);
    await check.check(1745, 2001);
    assert.deepEqual(asked, [], "the latest 256 ports' readings are kept");
    await check.check(1, 2001);
    assert.deepEqual(asked, [1], "the oldest went first: that port is read again, though no time passed");
  });
});

describe("reads of the tables begun after the asking", () => {
  type Read = { port: number; done: (sockets: ListeningSocket[]) => void; fail: (err: Error) => void };
  const socket = (inode: string, uid = 2001): ListeningSocket => ({ address: "127.0.0.1", port: 5000, uid, inode, family: 4 });

  function reader() {
    const reads: Read[] = [];
    const fresh = new FreshReads((port) => new Promise((done, fail) => reads.push({ port, done, fail })));
    return { reads, fresh };
  }

  test("a read under way when asked is not the answer; those asking meanwhile share the next one", async () => {
    const { reads, fresh } = reader();
    const first = fresh.after(5000);
    const second = fresh.after(5000);
    const third = fresh.after(5000);
    assert.equal(reads.length, 1, "one read under way; the next waits for it");
    reads[0].done([socket("old")]);
    assert.deepEqual(await first, [socket("old")]);
    await new Promise(setImmediate);
    assert.equal(reads.length, 2, "the askers during the first read share one more");
    reads[1].done([socket("new")]);
    assert.deepEqual(await second, [socket("new")]);
    assert.deepEqual(await third, [socket("new")]);
    const otherPort = fresh.after(6000);
    assert.equal(reads.at(-1)!.port, 6000, "another port reads on its own");
    reads.at(-1)!.done([]);
    assert.deepEqual(await otherPort, []);
  });

  test("a failed read fails its askers, and the next ones read again", async () => {
    const { reads, fresh } = reader();
    const first = fresh.after(5000);
    const waiting = fresh.after(5000);
    reads[0].fail(new Error("gone"));
    await assert.rejects(first, /gone/);
    await new Promise(setImmediate);
    reads[1].done([socket("a")]);
    assert.deepEqual(await waiting, [socket("a")]);
  });

  test("the checked socket must still listen, as the same uid, in a read begun after the connection", async () => {
    let now = [socket("a")];
    const check = new PortAccessCheck(systemClock, async () => now);
    const access = await check.check(5000, 2001);
    assert.ok(access.ok);
    assert.equal(await check.stillListens(5000, 2001, access.inode), true);
    now = [socket("b")];
    assert.equal(await check.stillListens(5000, 2001, access.inode), false, "another socket took the port");
    now = [socket("a", 2002)];
    assert.equal(await check.stillListens(5000, 2001, access.inode), false, "the socket is another uid's");
  });
});

describe("tokens", () => {
  test("26 base32 characters, with the replica's name before them when there is one", () => {
    assert.match(newToken(), /^[a-z2-7]{26}$/);
    assert.match(newToken("agentbox-1"), /^agentbox-1-[a-z2-7]{26}$/);
    assert.notEqual(newToken(), newToken());
  });

  test("found in paths and hosts exactly, and nowhere else", () => {
    const t = newToken("r2");
    assert.deepEqual(tokenOfPath(`/preview/${t}/a/b?c`), { token: t, rest: "/a/b?c" });
    assert.deepEqual(tokenOfPath(`/preview/${t}`), { token: t, rest: undefined });
    assert.equal(tokenOfPath(`/preview/${t}x/`), undefined);
    assert.equal(tokenOfPath(`/preview/${t.slice(0, -1)}/`), undefined);
    assert.equal(tokenOfPath(`/preview/${t.toUpperCase()}/`), undefined);
    assert.deepEqual(tokenOfHost(`5173-${t}.preview.localhost:8080`, "preview.localhost"), { port: 5173, token: t });
    assert.equal(tokenOfHost(`5173-${t}.preview.localhost.evil.example`, "preview.localhost"), undefined);
    assert.equal(tokenOfHost(`5173-${t}.evilpreview.localhost`, "preview.localhost"), undefined);
    assert.equal(tokenOfHost(`5173-${t}.preview.localhost`, undefined), undefined);
  });
});

describe("what crosses the proxy", () => {
  test("the hub's credentials and the client's forwarding claims are dropped; the hub's forwarding set", () => {
    const out = toApp(
      {
        authorization: "Bearer k",
        "x-api-key": "k",
        "proxy-authorization": "Basic x",
        "x-agentbox-session-token": "t",
        "mcp-session-id": "s",
        "mcp-method": "tools/call",
        forwarded: "for=1.2.3.4",
        "x-forwarded-prefix": "/elsewhere",
        "x-real-ip": "1.2.3.4",
        cookie: "a=1; pv_jar_b=2",
        accept: "text/html",
      },
      { proto: "https", host: "agents.example.com", for: "10.0.0.9", prefix: "/preview/abc" },
      "pv_jar_",
    );
    assert.deepEqual(out, {
      cookie: "b=2",
      accept: "text/html",
      "x-forwarded-for": "10.0.0.9",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "agents.example.com",
      "x-forwarded-prefix": "/preview/abc",
    });
    assert.equal(pathToApp("/a?api_key=k&b=1"), "/a?b=1");
    assert.equal(pathToApp("/a?api_key=k"), "/a");
    assert.equal(pathToApp("/a?b=1"), "/a?b=1");
  });

  test("in the path form an app's origin-wide headers go, and its redirects stay under its prefix", () => {
    const headers: Record<string, string> = { "service-worker-allowed": "/", "clear-site-data": '"*"', location: "/login", "content-type": "text/html" };
    fromApp(headers, "pv_jar_", "/preview/abc");
    assert.deepEqual(headers, { location: "/preview/abc/login", "content-type": "text/html" });
    for (const location of ["//evil.example/", "https://x.example/", "/preview/abc/ok", "relative"]) {
      const h = { location };
      fromApp(h, "pv_jar_", "/preview/abc");
      assert.equal(h.location, location);
    }
    // in the subdomain form the app is an origin of its own: only its cookies change
    const own: Record<string, string | string[]> = { "service-worker-allowed": "/", location: "/login", "set-cookie": ["a=1; Domain=localhost"] };
    fromApp(own, "pv_jar_");
    assert.deepEqual(own, { "service-worker-allowed": "/", location: "/login", "set-cookie": ["pv_jar_a=1"] });
  });
});

describe("cookie jars", () => {
  test("one per token, 16 base32 characters of its digest, none like another's", () => {
    const [a, b] = [newToken(), newToken()];
    assert.match(cookieJar(a), /^pv_[a-z2-7]{16}_$/);
    assert.equal(cookieJar(a), cookieJar(a));
    assert.notEqual(cookieJar(a), cookieJar(b));
    assert.ok(!cookieJar(a).includes(a.slice(0, 8)), "the jar shows nothing of the token");
  });

  test("an app's cookies go into its jar, host-only, and in the path form under its prefix alone", () => {
    const lines = [
      "sid=s1; Path=/; Domain=localhost; HttpOnly",
      "theme = dark ;path=/admin; domain=.example.com; Max-Age=60; SameSite=Lax",
      "__Host-id=x; Path=/; Secure",
      "nameless",
      "=no-name",
    ];
    assert.deepEqual(cookiesFromApp(lines, "pv_j_", "/preview/t"), [
      "pv_j_sid=s1; HttpOnly; Path=/preview/t/",
      "pv_j_theme=dark; Max-Age=60; SameSite=Lax; Path=/preview/t/",
      "__Host-pv_j_id=x; Secure; Path=/preview/t/",
    ]);
    assert.deepEqual(cookiesFromApp(lines, "pv_j_"), [
      "pv_j_sid=s1; Path=/; HttpOnly",
      "pv_j_theme=dark; path=/admin; Max-Age=60; SameSite=Lax",
      "__Host-pv_j_id=x; Path=/; Secure",
    ]);
  });

  test("only the cookies of the preview's jar reach its app, under their own names", () => {
    const sent = "sid=PLANTED; pv_j_sid=s1; pv_other_sid=theirs; __Host-pv_j_id=x; __Secure-sid=y; pv_j_=empty; pv_j_a=b=c; junk";
    assert.equal(cookiesToApp(sent, "pv_j_"), "sid=s1; __Host-id=x; a=b=c");
    assert.equal(cookiesToApp("sid=PLANTED", "pv_j_"), undefined);
    assert.equal(cookiesToApp(undefined, "pv_j_"), undefined);
  });
});

describe("the store", () => {
  afterEach(() => mock.timers.reset());
  const preview = (token: string, session = "s1", seconds = 60): Preview => ({
    token,
    tenant: "alice",
    uid: 2001,
    port: 5000,
    session,
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + seconds * 1000),
  });

  test("a live token is found whole; a near one is not; an ended one says how it ended", () => {
    const ended: string[] = [];
    const store = new PreviewStore((p, why) => ended.push(`${p.token} ${why}`), systemClock);
    const t = newToken();
    store.add(preview(t));
    assert.equal("preview" in (store.lookup(t) ?? {}), true);
    assert.equal(store.lookup(t.slice(0, -1) + (t.endsWith("a") ? "b" : "a")), undefined);
    assert.equal(store.end(t, "revoked"), true);
    assert.deepEqual(store.lookup(t), { ended: "revoked" });
    assert.equal(store.end(t, "revoked"), false);
    assert.deepEqual(ended, [`${t} revoked`]);
  });

  test("a session's end ends its previews only; an expired one is ended when looked up", () => {
    const store = new PreviewStore(() => undefined, systemClock);
    const [a, b, c] = [newToken(), newToken(), newToken()];
    store.add(preview(a, "s1"));
    store.add(preview(b, "s2"));
    store.add(preview(c, "s2", -1));
    store.endAll({ session: "s1" }, "session ended");
    assert.deepEqual(store.lookup(a), { ended: "session ended" });
    assert.equal("preview" in (store.lookup(b) ?? {}), true);
    assert.deepEqual(store.lookup(c), { ended: "expired" });
    assert.equal(store.count("alice"), 1);
    store.endAll({}, "hub stopped");
  });

  test("a preview ends when its time is up, on the hub's clock; one ended sooner does not end again", () => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: 1_000_000 });
    const ended: string[] = [];
    const store = new PreviewStore((p, why) => ended.push(`${p.session} ${why}`), systemClock);
    const [a, b] = [newToken(), newToken()];
    store.add(preview(a, "a", 60));
    store.add(preview(b, "b", 60));
    store.end(b, "revoked");
    mock.timers.tick(59_999);
    assert.equal("preview" in (store.lookup(a) ?? {}), true, "live until its expiry");
    mock.timers.tick(1);
    assert.deepEqual(ended, ["b revoked", "a expired"], "it ends when its time is up, its connections cut (onEnd), once");
    assert.deepEqual(store.lookup(a), { ended: "expired" });
    assert.equal(store.count("alice"), 0);
  });
});
