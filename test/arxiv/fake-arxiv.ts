// A local stand-in for arXiv on 127.0.0.1 (the tests never reach the real service): the query
// API answers with the project's Atom fixtures (test/fixtures/arxiv), the PDF service with small
// generated PDFs. It records every request, and how many ran at once, so tests can check the
// client's spacing, serialisation and cache.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { PDFDocument, StandardFonts } from "pdf-lib";

const FIXTURES = fileURLToPath(new URL("../../../test/fixtures/arxiv/", import.meta.url));
const fixture = (name: string) => fs.readFileSync(FIXTURES + name, "utf8");

export interface RecordedRequest {
  path: string;
  params: URLSearchParams;
  startedAt: number;
}

export interface FakeArxiv {
  apiUrl: string;
  pdfUrl: string;
  requests: RecordedRequest[];
  maxInFlight: number;
  close(): Promise<void>;
}

/** The body lines of the generated PDF for a paper id. */
export function pdfLines(id: string): string[] {
  return [`Full text of arXiv paper ${id}`, ...Array.from({ length: 30 }, (_, i) => `Section ${i + 1} discusses result number ${i + 1}.`)];
}

async function makePdf(id: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([612, 900]);
  pdfLines(id).forEach((line, i) => page.drawText(line, { x: 40, y: 860 - i * 26, size: 12, font }));
  return Buffer.from(await pdf.save());
}

// Every entry in the search fixtures can also be fetched by id, like on arXiv.
function entriesById(ids: string[]): string[] {
  const entries = (fixture("search-page1.xml") + fixture("search-page2.xml")).match(/<entry>[\s\S]*?<\/entry>/g) ?? [];
  return ids.flatMap((id) => entries.filter((e) => new RegExp(`/abs/${id.replace(/\./g, "\\.")}(v\\d+)?</id>`).test(e)));
}

function idFeed(ids: string[]): string {
  const found = entriesById(ids);
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/agentboxFixtureIds</id>
  <title>arXiv Query: search_query=&amp;id_list=${ids.join(",")}&amp;start=0&amp;max_results=${ids.length}</title>
  <updated>2025-11-20T00:00:00Z</updated>
  <opensearch:itemsPerPage>${ids.length}</opensearch:itemsPerPage>
  <opensearch:totalResults>${found.length}</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
  ${found.join("\n  ")}
</feed>`;
}

export async function startFakeArxiv(): Promise<FakeArxiv> {
  let inFlight = 0;
  const state = { requests: [] as RecordedRequest[], maxInFlight: 0 };
  const atom = (res: http.ServerResponse, body: string, status = 200) =>
    res.writeHead(status, { "content-type": "application/atom+xml; charset=utf-8" }).end(body);

  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    state.requests.push({ path: url.pathname, params: url.searchParams, startedAt: Date.now() });
    inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on("close", () => (inFlight -= 1));
    await new Promise((r) => setTimeout(r, 40)); // long enough that overlapping requests would show
    const query = url.searchParams.get("search_query") ?? "";
    const ids = (url.searchParams.get("id_list") ?? "").split(",").filter(Boolean);

    if (url.pathname.startsWith("/pdf/")) {
      const id = decodeURIComponent(url.pathname.slice("/pdf/".length));
      if (id.startsWith("2402.00002")) return void res.writeHead(200, { "content-type": "text/html" }).end("<html>PDF being generated</html>");
      return void res.writeHead(200, { "content-type": "application/pdf" }).end(await makePdf(id));
    }
    if (url.pathname !== "/api/query") return void res.writeHead(404).end();
    if (query.includes("busy")) return void res.writeHead(503, { "retry-after": "7", "content-type": "text/plain" }).end("busy");
    if (query.includes("slow")) return; // never answers
    if (query.includes("badquery")) return atom(res, fixture("error.xml"), 400);
    if (ids.includes("9999.99999")) return atom(res, fixture("error.xml"));
    if (ids.length) return atom(res, idFeed(ids));
    return atom(res, fixture(url.searchParams.get("start") === "2" ? "search-page2.xml" : "search-page1.xml"));
  };
  // a fault of the fake (a PDF it could not make) reaches the test as a 500 naming it
  const server = http.createServer((req, res) => void answer(req, res).catch((err: unknown) => res.writeHead(500).end(String(err))));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: `${origin}/api/query`,
    pdfUrl: `${origin}/pdf`,
    get requests() {
      return state.requests;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
