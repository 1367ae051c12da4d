// Which MCP revision the page speaks: a control to choose the SDK's negotiation mode (auto finds
// 2026-07-28 on this hub; legacy is the 2025-11-25 handshake with a session), and a badge with what
// the connection actually negotiated. The choice lives in the page's URL (?protocol=legacy), like the
// catalog's: choosing reloads the page into a new connection, and a link keeps the choice.
import { modeOf, type Connection, type Mode } from "./connection.js";
import { h } from "./dom.js";

const LABELS: Record<Mode, string> = {
  auto: "2026-07-28 (auto)",
  legacy: "2025-11-25 (legacy)",
};

export function protocolChoice(): HTMLElement {
  const current = modeOf();
  const select = h(
    "select",
    { name: "protocol", "aria-label": "MCP protocol revision", title: "Which MCP revision this page speaks; changing it reconnects" },
    (Object.keys(LABELS) as Mode[]).map((mode) => h("option", { value: mode, selected: mode === current }, LABELS[mode])),
  );
  select.addEventListener("change", () => {
    const params = new URLSearchParams(location.search);
    if (select.value === "legacy") params.set("protocol", "legacy");
    else params.delete("protocol");
    const query = params.toString();
    location.assign(`${location.pathname}${query ? `?${query.replace(/%2C/gi, ",")}` : ""}${location.hash}`);
  });
  return h("label", { class: "protocol-choice" }, h("span", { class: "muted" }, "Protocol"), select);
}

/** What the connection negotiated, and what that means for it. */
export function protocolBadge(connection: Connection): HTMLElement {
  const { era, protocolVersion, sessionId } = connection;
  const title =
    era === "modern"
      ? "MCP 2026-07-28: no session; each request carries its protocol version, client info and capabilities, and changes arrive on a subscriptions/listen stream"
      : `MCP ${protocolVersion}: the 2025 initialize handshake${sessionId ? `, session ${sessionId}` : ""}`;
  return h(
    "span",
    { class: `protocol era-${era}`, "data-era": era, "data-version": protocolVersion, title },
    `MCP ${protocolVersion}`,
    sessionId ? h("span", { class: "muted" }, ` · session ${sessionId.slice(0, 8)}`) : null,
  );
}
