// arxiv through the hub against a local server speaking arXiv's Atom format: parsing (with and
// without rel/title on links), query building, paging, the error feed, 503 and timeouts, request
// spacing and the cache, and a download that ends up readable with `read`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../helpers/hub.js";
import { pdfLines, startFakeArxiv, type FakeArxiv } from "./fake-arxiv.js";

const INTERVAL_MS = 250;
let arxiv: FakeArxiv;
let hub: TestHub;
let client: Client;

type Result = Awaited<ReturnType<typeof call>>;
const data = (r: Result) => r.structuredContent as Record<string, any>;

async function ok(tool: string, args: Record<string, unknown> = {}): Promise<Result> {
  const result = await call(client, `arxiv_${tool}`, args);
  assert.ok(!result.isError, `${tool} failed: ${textOf(result)}`);
  return result;
}

async function failure(tool: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(client, `arxiv_${tool}`, args);
  assert.equal(result.isError, true, `expected an error, got: ${textOf(result).slice(0, 300)}`);
  return textOf(result);
}

const apiRequests = () => arxiv.requests.filter((r) => r.path === "/api/query");

before(async () => {
  arxiv = await startFakeArxiv();
  hub = await startHub({
    servers: ["arxiv"],
    env: {
      ARXIV_API_URL: arxiv.apiUrl,
      ARXIV_PDF_URL: arxiv.pdfUrl,
      ARXIV_MIN_INTERVAL_MS: String(INTERVAL_MS),
      ARXIV_TIMEOUT_MS: "1500",
    },
  });
  client = await hub.connect();
});

after(async () => {
  await hub?.stop();
  await arxiv?.close();
  if (hub) fs.rmSync(hub.workspace, { recursive: true, force: true });
});

describe("search", () => {
  test("plain words, full metadata from a feed with rel/title on links", async () => {
    const result = await ok("search", { query: "quantum gravity", limit: 2 });
    const sent = apiRequests().at(-1)!.params;
    assert.equal(sent.get("search_query"), "all:quantum AND all:gravity");
    assert.equal(sent.get("max_results"), "2");
    assert.equal(sent.get("sortBy"), "relevance");
    const d = data(result);
    assert.equal(d.total, 3);
    assert.equal(d.count, 2);
    assert.equal(d.nextOffset, 2);
    const [first, second] = d.papers;
    assert.deepEqual(first, {
      id: "2401.00001v2",
      version: 2,
      title: "Emergent Gravity from Quantum Entanglement & Tensor Networks",
      authors: ["Ada Lovelace", "Alan Turing"],
      abstract: "We show how a smooth geometry emerges from the entanglement structure of a tensor network state.",
      categories: ["gr-qc", "quant-ph"],
      primaryCategory: "gr-qc",
      published: "2024-01-02T18:00:00Z",
      updated: "2024-02-10T09:30:00Z",
      comment: "12 pages, 3 figures",
      journalRef: "Fixture J. Phys. 7 (2024) 101",
      doi: "10.1000/fixture.2024.001",
      absUrl: "https://arxiv.org/abs/2401.00001v2",
      pdfUrl: "https://arxiv.org/pdf/2401.00001v2",
    });
    assert.equal(second.id, "hep-th/9901001v1");
    assert.equal(second.comment, null);
    const text = textOf(result);
    assert.match(text, /3 papers match .*showing 1-2\. Next page: call arxiv_search with offset=2/);
    assert.match(text, /Emergent Gravity from Quantum Entanglement & Tensor Networks \[2401\.00001v2\]/);
    assert.match(text, /gr-qc \(primary\), quant-ph/);
  });

  test("second page from a feed whose links have no rel/title", async () => {
    const d = data(await ok("search", { query: "quantum gravity", offset: 2, limit: 2 }));
    // offset and limit become arXiv's own start and max_results on the wire
    assert.equal(apiRequests().at(-1)!.params.get("start"), "2");
    assert.equal(apiRequests().at(-1)!.params.get("max_results"), "2");
    assert.equal(d.offset, 2);
    assert.equal(d.nextOffset, null);
    const [paper] = d.papers;
    assert.equal(paper.id, "2402.00002v1");
    assert.equal(paper.absUrl, "https://arxiv.org/abs/2402.00002v1");
    assert.equal(paper.pdfUrl, "https://arxiv.org/pdf/2402.00002v1");
    assert.equal(paper.doi, "10.1000/fixture.2024.002");
    assert.equal(paper.primaryCategory, "hep-th");
  });

  test("field prefixes pass through; categories, dates and sorting are added", async () => {
    const d = data(
      await ok("search", {
        query: "ti:transformer AND au:vaswani",
        categories: ["cs.LG", "stat.ML"],
        submittedFrom: "2024-01-01",
        submittedTo: "2024-12-31",
        sortBy: "submitted",
        sortOrder: "ascending",
      }),
    );
    const sent = apiRequests().at(-1)!.params;
    const expected = "(ti:transformer AND au:vaswani) AND (cat:cs.LG OR cat:stat.ML) AND (submittedDate:[202401010000 TO 202412312359])";
    assert.equal(sent.get("search_query"), expected);
    assert.equal(d.searchQuery, expected);
    assert.equal(sent.get("sortBy"), "submittedDate");
    assert.equal(sent.get("sortOrder"), "ascending");
  });

  test("bad input is refused before any request", async () => {
    const before = arxiv.requests.length;
    assert.match(await failure("search", {}), /Give a query/);
    assert.match(await failure("search", { query: "x", categories: ["not a category!"] }), /not an arXiv category/);
    assert.match(await failure("search", { query: "x", submittedFrom: "last tuesday" }), /not a date/);
    assert.match(await failure("get", { ids: ["not-an-id"] }), /not an arXiv id/);
    assert.equal(arxiv.requests.length, before);
  });

  test("a repeated query is answered from the cache", async () => {
    await ok("search", { query: "cached words" });
    const count = apiRequests().length;
    const again = await ok("search", { query: "cached words" });
    assert.equal(apiRequests().length, count);
    assert.equal(data(again).total, 3);
  });
});

describe("politeness", () => {
  test("concurrent calls reach arXiv one at a time, spaced by the minimum interval", async () => {
    const first = arxiv.requests.length;
    await Promise.all(["alpha", "beta", "gamma", "delta"].map((q) => ok("search", { query: `spacing ${q}` })));
    const starts = arxiv.requests.slice(first).map((r) => r.startedAt);
    assert.equal(starts.length, 4);
    assert.equal(arxiv.maxInFlight, 1);
    for (let i = 1; i < starts.length; i++) {
      // slack: the client spaces its sends, the server stamps arrivals, which a loaded machine delays
      // unevenly (without the spacing the gaps would be near 0)
      assert.ok(starts[i]! - starts[i - 1]! >= INTERVAL_MS * 0.75, `gap ${i}: ${starts[i]! - starts[i - 1]!} ms`);
    }
  });
});

describe("errors from arXiv", () => {
  test("the error feed (HTTP 200, one entry titled Error)", async () => {
    assert.match(await failure("get", { ids: ["9999.99999"] }), /arXiv rejected the request: incorrect id format for 9999\.99999/);
  });

  test("the error feed sent with HTTP 400", async () => {
    assert.match(await failure("search", { query: "badquery" }), /arXiv rejected the request: incorrect id format/);
  });

  test("503 with Retry-After", async () => {
    assert.match(await failure("search", { query: "busy" }), /arXiv is busy or rate-limiting \(HTTP 503\)\. Retry after 7 s/);
  });

  test("a request that never answers times out", async () => {
    assert.match(await failure("search", { query: "slow" }), /Timed out after 1500 ms/);
  });
});

describe("get", () => {
  test("old and new style ids in any accepted shape; unknown ids reported", async () => {
    const result = await ok("get", { ids: ["arXiv:2401.00001", "https://arxiv.org/abs/hep-th/9901001v1", "2405.99999"] });
    assert.equal(apiRequests().at(-1)!.params.get("id_list"), "2401.00001,hep-th/9901001v1,2405.99999");
    const d = data(result);
    assert.deepEqual(
      d.papers.map((p: { id: string }) => p.id),
      ["2401.00001v2", "hep-th/9901001v1"],
    );
    assert.deepEqual(d.notFound, ["2405.99999"]);
    assert.match(textOf(result), /Not found: 2405\.99999/);
    assert.match(await failure("get", { ids: ["2405.99998"] }), /no paper with id 2405\.99998/);
  });
});

describe("download, read, list", () => {
  test("a downloaded paper is kept as PDF + Markdown and readable page by page", async () => {
    const result = await ok("download", { id: "2401.00001" });
    const d = data(result);
    assert.equal(d.id, "2401.00001v2");
    assert.equal(d.pdf, path.join("papers", "2401.00001v2.pdf"));
    assert.equal(d.markdown, path.join("papers", "2401.00001v2.md"));
    assert.equal(d.alreadyDownloaded, false);
    assert.equal(arxiv.requests.at(-1)!.path, "/pdf/2401.00001v2");
    assert.equal(fs.readFileSync(path.join(hub.workspace, d.pdf)).subarray(0, 5).toString(), "%PDF-");
    const md = fs.readFileSync(path.join(hub.workspace, d.markdown), "utf8");
    assert.match(md, /^# Emergent Gravity from Quantum Entanglement & Tensor Networks/);
    const lines = pdfLines("2401.00001v2");
    assert.ok(lines.length > 0);
    for (const line of lines) assert.ok(md.includes(line), line);

    // read without version finds the downloaded version; pages join up to the whole text
    let offset: number | null = 0;
    let text = "";
    while (offset !== null) {
      const page = await ok("read", { id: "2401.00001", offset, limit: 400 });
      const p = data(page);
      assert.equal(p.totalChars, md.length);
      text += md.slice(p.offset, p.end);
      if (p.nextOffset !== null) assert.match(textOf(page), new RegExp(`call arxiv_read with offset=${p.nextOffset}`));
      offset = p.nextOffset;
    }
    assert.equal(text, md);

    const requests = arxiv.requests.length;
    const again = data(await ok("download", { id: "2401.00001v2" }));
    assert.equal(again.alreadyDownloaded, true);
    assert.equal(arxiv.requests.length, requests);
  });

  test("old-style ids are stored file-safe and listed", async () => {
    const d = data(await ok("download", { id: "hep-th/9901001" }));
    assert.equal(d.pdf, path.join("papers", "hep-th_9901001v1.pdf"));
    assert.match(textOf(await ok("read", { id: "hep-th/9901001v1", limit: 200 })), /^# Strings on a Lattice/);
    const list = await ok("list");
    assert.deepEqual(
      data(list).papers.map((p: { id: string; title: string }) => [p.id, p.title]),
      [
        ["2401.00001v2", "Emergent Gravity from Quantum Entanglement & Tensor Networks"],
        ["hep-th/9901001v1", "Strings on a Lattice"],
      ],
    );
    assert.match(textOf(list), /hep-th\/9901001v1: Strings on a Lattice/);
  });

  test("errors: not downloaded, no PDF from arXiv", async () => {
    assert.match(await failure("read", { id: "2402.00002" }), /not downloaded; call arxiv_download first\. Downloaded: 2401\.00001v2, hep-th\/9901001v1/);
    assert.match(await failure("download", { id: "2402.00002" }), /did not return a PDF/);
    assert.ok(!fs.existsSync(path.join(hub.workspace, "papers", "2402.00002v1.pdf")));
  });
});
