// This page's session's open previews (hub_preview), as hub_sessions lists them: a link each, opened
// in a new tab without a way back to this page (the app behind it is the agent's, so untrusted).
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";
import { tenantPanel } from "./tenant-panel.js";

/** hub_sessions' entry for one preview (hub/tools/preview-tools.ts). */
interface PreviewEntry {
  port: number;
  url: string;
  subdomainUrl?: string;
  expiresAt: string;
}

/** Only a web address becomes a link. */
function webUrl(text: string | undefined): string | undefined {
  try {
    const url = new URL(text ?? "");
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export class PreviewsPanel {
  readonly element: HTMLDetailsElement;
  private readonly panel = tenantPanel("previews", "Previews of this session", () => void this.refresh());

  constructor(private readonly connection: () => Connection | undefined) {
    this.element = this.panel.element;
  }

  refresh(): Promise<void> {
    return this.panel.fill(this.connection(), "hub_sessions", { limit: 1 }, (data) => this.show((data as { previews?: PreviewEntry[] }).previews ?? []));
  }

  private show(previews: PreviewEntry[]): void {
    this.panel.counted(previews.length);
    const link = (href: string | undefined, text: string) => (href ? h("a", { href, target: "_blank", rel: "noopener noreferrer" }, text) : null);
    replace(
      this.panel.list,
      previews.length ? null : h("li", { class: "muted" }, "None: an agent opens one with hub_preview."),
      ...previews.map((p) =>
        h(
          "li",
          { class: "preview-entry", "data-port": String(p.port) },
          link(webUrl(p.url), `port ${p.port}`),
          link(webUrl(p.subdomainUrl), " (own origin)"),
          h("span", { class: "muted" }, ` until ${new Date(p.expiresAt).toLocaleTimeString()}`),
        ),
      ),
    );
  }
}
