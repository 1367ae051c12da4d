// Pretty, foldable JSON: objects and arrays are <details> (native folding, keyboard accessible);
// children of a folded node are only built when it is first opened, so a huge result stays cheap.
import { h, type Child } from "./dom.js";

const MAX_CHILDREN = 500;

export interface JsonTreeOptions {
  /** Nodes deeper than this start folded. */
  openDepth?: number;
}

export function jsonTree(value: unknown, options: JsonTreeOptions = {}): HTMLElement {
  const openDepth = options.openDepth ?? 2;
  const root = h("div", { class: "json-tree" }, node(value, null, 0, openDepth));
  const copy = h("button", { class: "ghost small copy", type: "button", title: "Copy as JSON" }, "Copy");
  copy.addEventListener("click", () => {
    void navigator.clipboard?.writeText(JSON.stringify(value, null, 2)).then(() => {
      copy.textContent = "Copied";
      setTimeout(() => (copy.textContent = "Copy"), 1200);
    });
  });
  return h("div", { class: "json-view" }, copy, root);
}

function node(value: unknown, key: string | null, depth: number, openDepth: number): HTMLElement {
  const label: Child = key === null ? null : [h("span", { class: "j-key" }, key), ": "];
  if (value === null || typeof value !== "object") return h("div", { class: "j-row" }, label, primitive(value));

  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  const [open, close] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return h("div", { class: "j-row" }, label, h("span", { class: "j-punct" }, open + close));

  const summary = h(
    "summary",
    null,
    label,
    h("span", { class: "j-punct" }, open),
    h(
      "span",
      { class: "j-count" },
      isArray ? ` ${entries.length} item${entries.length === 1 ? "" : "s"} ` : ` ${entries.length} key${entries.length === 1 ? "" : "s"} `,
    ),
    h("span", { class: "j-punct j-close-folded" }, close),
  );
  const details = h("details", { class: "j-node", open: depth < openDepth }, summary);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const body = h("div", { class: "j-children" });
    for (const [k, v] of entries.slice(0, MAX_CHILDREN)) body.appendChild(node(v, isArray ? null : k, depth + 1, openDepth));
    if (entries.length > MAX_CHILDREN) body.appendChild(h("div", { class: "j-more" }, `… ${entries.length - MAX_CHILDREN} more (see Raw)`));
    details.append(body, h("div", { class: "j-punct" }, close));
  };
  if (details.open) build();
  else details.addEventListener("toggle", build);
  return details;
}

function primitive(value: unknown): HTMLElement {
  if (typeof value === "string") return h("span", { class: "j-string" }, JSON.stringify(value));
  if (typeof value === "number") return h("span", { class: "j-number" }, String(value));
  if (typeof value === "boolean") return h("span", { class: "j-bool" }, String(value));
  return h("span", { class: "j-null" }, "null");
}
