// Small real documents, generated with the libraries that write each format, so every
// conversion test checks content we know.
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from "docx";
import JSZip from "jszip";
import { PDFDocument, StandardFonts } from "pdf-lib";
import * as XLSX from "xlsx";

export async function makePdf(lines: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage();
  lines.forEach((line, i) => page.drawText(line, { x: 50, y: 720 - i * 24, size: 16, font }));
  return Buffer.from(await pdf.save());
}

export async function makeDocx(): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: "Quarterly Report", heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun("Revenue grew "), new TextRun({ text: "twelve percent", bold: true })] }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

export function makeXlsx(): Buffer {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(
    wb,
    XLSX.utils.aoa_to_sheet([
      ["fruit", "qty"],
      ["apple", 3],
      ["pear", 7],
    ]),
    "Stock",
  );
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([["city"], ["Lyon"]]), "Places");
  return XLSX.write(wb, { type: "buffer", bookType: "xlsx" }) as Buffer;
}

export const HTML = `<!doctype html><html><head><title>Fixture Page</title><style>p{color:red}</style></head>
<body><h1>Main heading</h1><p>Some <em>emphasised</em> text and a <a href="https://example.test/x">link</a>.</p>
<script>document.write("should not appear")</script><ul><li>first</li><li>second</li></ul></body></html>`;

export const CSV = 'name,note,count\nalpha,"has, comma",1\nbeta,"pipe | inside",2\n';

export const JSON_TEXT = '{"name":"agentbox","tags":["mcp","hub"],"nested":{"ok":true}}';

export async function makeZip(docx: Buffer): Promise<Buffer> {
  const zip = new JSZip();
  zip.file("page.html", HTML);
  zip.file("data/table.csv", CSV);
  zip.file("data/config.json", JSON_TEXT);
  zip.file("report.docx", docx);
  zip.file("blob.bin", Buffer.from([1, 2, 3]));
  return zip.generateAsync({ type: "nodebuffer" });
}
