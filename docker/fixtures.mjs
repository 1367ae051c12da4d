// Local stand-ins the container's tools talk to during the smoke test, on the host's loopback
// (the container shares the host's network): a web page for the browser, and an arXiv API that
// answers in arXiv's real Atom format. Nothing here reaches beyond 127.0.0.1.
import http from "node:http";

export const PAGE_TITLE = "Agentbox smoke page";
export const PAGE_TOKEN = "token-7f3a9c";
export const PAPER_TITLE = "A Local Stand-in Paper for the Container Smoke Test";

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>${PAGE_TITLE}</title></head>
<body><h1>${PAGE_TITLE}</h1><p id="token">${PAGE_TOKEN}</p><p lang="ja">日本語のテキスト</p></body></html>`;

function atomFeed(query) {
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/smoke</id>
  <title type="html">ArXiv Query: ${esc(query)}</title>
  <updated>2024-01-02T00:00:00-05:00</updated>
  <opensearch:totalResults>1</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
  <opensearch:itemsPerPage>10</opensearch:itemsPerPage>
  <entry>
    <id>http://arxiv.org/abs/2401.00001v2</id>
    <updated>2024-01-02T10:00:00Z</updated>
    <published>2024-01-01T10:00:00Z</published>
    <title>${PAPER_TITLE}</title>
    <summary>We check that a container answers arXiv searches through a local server.</summary>
    <author><name>Ada Lovelace</name></author>
    <arxiv:primary_category term="cs.SE" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.SE" scheme="http://arxiv.org/schemas/atom"/>
    <link href="http://arxiv.org/abs/2401.00001v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2401.00001v2" rel="related" type="application/pdf"/>
  </entry>
</feed>`;
}

/** Start the stand-ins on an ephemeral loopback port. */
export async function startFixtures() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(url.pathname + url.search);
    if (url.pathname === "/page.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    } else if (url.pathname === "/api/query") {
      const query = url.searchParams.get("search_query") ?? url.searchParams.get("id_list") ?? "";
      res.writeHead(200, { "content-type": "application/atom+xml; charset=utf-8" }).end(atomFeed(query));
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    pageUrl: `${origin}/page.html`,
    arxivApiUrl: `${origin}/api/query`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
