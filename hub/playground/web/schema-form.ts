// A tool's JSON Schema as a form: strings, numbers, booleans, enums, arrays and nested objects,
// each with its description, default and a required mark. Anything the form cannot express
// (unions, maps) falls back to a JSON text box, so every tool stays callable.
import { h, replace, type Child } from "./dom.js";

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  title?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  [key: string]: unknown;
}

/** What a field holds: nothing (left out of the arguments) or a value. */
type Read = { present: false } | { present: true; value: unknown };
const ABSENT: Read = { present: false };

interface Field {
  element: HTMLElement;
  /** The field's value; problems are pushed to `errors` and shown next to the field. */
  read(errors: string[]): Read;
}

interface Ctx {
  root: JsonSchema;
}

export interface Form {
  element: HTMLElement;
  /** The arguments, or the list of problems that keep the form from producing them. */
  read(): { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };
}

export function buildForm(schema: JsonSchema): Form {
  const ctx: Ctx = { root: schema };
  const props = schema.properties ?? {};
  if (Object.keys(props).length === 0) {
    return { element: h("p", { class: "muted no-args" }, "This tool takes no arguments."), read: () => ({ ok: true, value: {} }) };
  }
  const object = objectFields(ctx, schema, "", true);
  return {
    element: h("div", { class: "schema-form" }, object.element),
    read() {
      const errors: string[] = [];
      const r = object.read(errors);
      if (errors.length) return { ok: false, errors };
      return { ok: true, value: (r.present ? r.value : {}) as Record<string, unknown> };
    },
  };
}

/** Follows local $refs and unwraps "X or null" (how zod writes nullable) to X. */
function normalize(ctx: Ctx, schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; i < 10 && s.$ref?.startsWith("#/"); i++) {
    const target = s.$ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[decodeURIComponent(key)], ctx.root);
    if (!target || typeof target !== "object") break;
    const { $ref: _ref, ...rest } = s;
    s = { ...(target as JsonSchema), ...rest };
  }
  const union = s.anyOf ?? s.oneOf;
  if (union) {
    const nonNull = union.filter((u) => u.type !== "null");
    if (nonNull.length === 1) s = { ...normalize(ctx, nonNull[0]!), description: s.description ?? nonNull[0]!.description, default: s.default };
    else if (union.every((u) => "const" in u)) s = { ...s, enum: union.map((u) => u.const) };
  }
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== "null");
    if (types.length === 1) s = { ...s, type: types[0] };
  }
  if (s.const !== undefined && !s.enum) s = { ...s, enum: [s.const] };
  return s;
}

function typeHint(s: JsonSchema): string {
  const bits: string[] = [];
  if (s.enum) bits.push("one of " + s.enum.map((v) => JSON.stringify(v)).join(", "));
  else if (s.type === "array") bits.push(`array of ${normalizeType(s.items)}`);
  else bits.push(String(s.type ?? "JSON"));
  // zod writes ±MAX_SAFE_INTEGER as the bounds of any integer: not worth showing
  const shown = (n: number | undefined): n is number => n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER;
  if (shown(s.minimum)) bits.push(`≥ ${s.minimum}`);
  if (shown(s.exclusiveMinimum)) bits.push(`> ${s.exclusiveMinimum}`);
  if (shown(s.maximum)) bits.push(`≤ ${s.maximum}`);
  if (shown(s.exclusiveMaximum)) bits.push(`< ${s.exclusiveMaximum}`);
  if (s.minItems) bits.push(`at least ${s.minItems}`);
  if (s.default !== undefined) bits.push(`default ${JSON.stringify(s.default)}`);
  return bits.join(" · ");
}

const normalizeType = (s?: JsonSchema) => (s?.enum ? "enum" : String(s?.type ?? "any"));

/**
 * Label, hints, control and an error line: the frame every field shares. Array items are `bare`:
 * the list already says what they are, so they show only their control.
 */
function frame(name: string, path: string, s: JsonSchema, required: boolean, control: Child, wide = false): { element: HTMLElement; error: HTMLElement } {
  const bare = name === "";
  const error = h("div", { class: "field-error", role: "alert" });
  const element = h(
    "div",
    { class: `field${wide ? " wide" : ""}${bare ? " bare" : ""}`, "data-path": path },
    bare
      ? null
      : h(
          "label",
          { class: "field-label", for: `f-${path}` },
          h("code", null, name),
          required ? h("span", { class: "required", title: "required" }, "*") : null,
          h("span", { class: "type-hint" }, typeHint(s)),
        ),
    s.description && !bare ? h("div", { class: "field-desc" }, s.description) : null,
    control,
    error,
  );
  return { element, error };
}

function setError(el: HTMLElement, error: HTMLElement, message: string | null): void {
  el.classList.toggle("invalid", message !== null);
  error.textContent = message ?? "";
}

function field(ctx: Ctx, raw: JsonSchema, name: string, path: string, required: boolean): Field {
  const s = normalize(ctx, raw);
  if (s.enum) return enumField(s, name, path, required);
  switch (s.type) {
    case "string":
      return scalarField(s, name, path, required, "string");
    case "number":
    case "integer":
      return scalarField(s, name, path, required, s.type);
    case "boolean":
      return booleanField(s, name, path, required);
    case "array":
      return arrayField(ctx, s, name, path, required);
    case "object":
      if (s.properties && Object.keys(s.properties).length) {
        const inner = objectFields(ctx, s, path, required);
        const { element } = frame(name, path, s, required, h("fieldset", { class: "nested" }, inner.element), true);
        return { element, read: inner.read };
      }
  }
  return jsonField(s, name, path, required);
}

function scalarField(s: JsonSchema, name: string, path: string, required: boolean, kind: "string" | "number" | "integer"): Field {
  const placeholder = s.default !== undefined ? String(s.default) : "";
  const control =
    kind === "string"
      ? h("textarea", { id: `f-${path}`, name: path, rows: 1, placeholder, spellcheck: "false" })
      : h("input", { id: `f-${path}`, name: path, type: "number", step: kind === "integer" ? "1" : "any", placeholder, min: s.minimum, max: s.maximum });
  const { element, error } = frame(name, path, s, required, control);
  return {
    element,
    read(errors) {
      const text = control.value;
      let problem: string | null = null;
      let result: Read = ABSENT;
      if (text === "") {
        if (required && s.default === undefined) problem = "Required.";
      } else if (kind === "string") {
        result = { present: true, value: text };
      } else {
        const n = Number(text);
        if (!Number.isFinite(n)) problem = `'${text}' is not a number.`;
        else if (kind === "integer" && !Number.isInteger(n)) problem = `${n} is not a whole number.`;
        else result = { present: true, value: n };
      }
      setError(element, error, problem);
      if (problem) errors.push(`${path}: ${problem}`);
      return result;
    },
  };
}

function booleanField(s: JsonSchema, name: string, path: string, required: boolean): Field {
  const fallback = s.default === true;
  const control = h("input", { id: `f-${path}`, name: path, type: "checkbox", checked: fallback });
  const { element } = frame(name, path, s, required, h("div", { class: "check" }, control, h("span", { class: "muted" }, "true when ticked")));
  return {
    element,
    // an untouched optional box stays out of the arguments, so the tool's own default applies
    read: () => (required || control.checked !== fallback ? { present: true, value: control.checked } : ABSENT),
  };
}

function enumField(s: JsonSchema, name: string, path: string, required: boolean): Field {
  const values = s.enum!;
  const defaultIndex = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(s.default));
  const control = h(
    "select",
    { id: `f-${path}`, name: path },
    !required || s.default !== undefined ? h("option", { value: "" }, s.default !== undefined ? `(default: ${JSON.stringify(s.default)})` : "(not set)") : null,
    values.map((v, i) => h("option", { value: String(i), selected: required && i === defaultIndex }, typeof v === "string" ? v : JSON.stringify(v))),
  );
  const { element, error } = frame(name, path, s, required, control);
  return {
    element,
    read(errors) {
      const problem = control.value === "" && required && s.default === undefined ? "Required." : null;
      setError(element, error, problem);
      if (problem) errors.push(`${path}: ${problem}`);
      return control.value === "" ? ABSENT : { present: true, value: values[Number(control.value)] };
    },
  };
}

function arrayField(ctx: Ctx, s: JsonSchema, name: string, path: string, required: boolean): Field {
  const itemSchema = s.items ?? {};
  const list = h("div", { class: "array-items" });
  const empty = h("div", { class: "muted empty" }, "No items.");
  const items: { field: Field; row: HTMLElement }[] = [];
  let nextId = 0;
  const renumber = () => {
    items.forEach((it, i) => (it.row.querySelector(".item-index")!.textContent = `#${i + 1}`));
    empty.hidden = items.length > 0;
  };
  const add = () => {
    // each item gets a stable path, so a removed item never shifts another one's name
    const itemPath = `${path}.${nextId++}`;
    const f = field(ctx, itemSchema, "", itemPath, true);
    const remove = h("button", { type: "button", class: "ghost small danger", title: "Remove this item", "data-remove": itemPath }, "Remove");
    const row = h("div", { class: "array-item" }, h("div", { class: "item-head" }, h("span", { class: "item-index" }), remove), f.element);
    remove.addEventListener("click", () => {
      items.splice(
        items.findIndex((it) => it.row === row),
        1,
      );
      row.remove();
      renumber();
    });
    items.push({ field: f, row });
    list.appendChild(row);
    renumber();
    (row.querySelector("input, textarea, select") as HTMLElement | null)?.focus();
  };
  const addButton = h(
    "button",
    { type: "button", class: "secondary small", "data-add": path },
    `+ Add ${normalizeType(itemSchema) === "object" ? "item" : normalizeType(itemSchema)}`,
  );
  addButton.addEventListener("click", add);
  const { element, error } = frame(name, path, s, required, h("div", { class: "array" }, list, empty, addButton), true);
  return {
    element,
    read(errors) {
      const values = items
        .map((it) => it.field.read(errors))
        .filter((r) => r.present)
        .map((r) => (r as { value: unknown }).value);
      const min = s.minItems ?? 0;
      const problem =
        values.length === 0 && required && s.default === undefined
          ? "Add at least one item."
          : values.length > 0 && values.length < min
            ? `Needs at least ${min} items.`
            : null;
      setError(element, error, problem);
      if (problem) errors.push(`${path}: ${problem}`);
      return values.length || (required && s.default === undefined) ? { present: true, value: values } : ABSENT;
    },
  };
}

function objectFields(ctx: Ctx, s: JsonSchema, path: string, required: boolean): Field {
  const requiredNames = new Set(s.required ?? []);
  const fields = Object.entries(s.properties ?? {}).map(([key, sub]) => ({
    key,
    field: field(ctx, sub, key, path ? `${path}.${key}` : key, requiredNames.has(key)),
  }));
  const element = h(
    "div",
    { class: "fields" },
    fields.map((f) => f.field.element),
  );
  return {
    element,
    read(errors) {
      const own: string[] = [];
      const value: Record<string, unknown> = {};
      for (const { key, field: f } of fields) {
        const r = f.read(own);
        if (r.present) value[key] = r.value;
      }
      // an optional object left entirely empty is left out, and so are its inner "required" marks
      if (!required && Object.keys(value).length === 0) {
        element.querySelectorAll(".invalid").forEach((el) => el.classList.remove("invalid"));
        element.querySelectorAll(".field-error").forEach((el) => replace(el));
        return ABSENT;
      }
      errors.push(...own);
      return { present: true, value };
    },
  };
}

function jsonField(s: JsonSchema, name: string, path: string, required: boolean): Field {
  const control = h("textarea", {
    id: `f-${path}`,
    name: path,
    rows: 3,
    class: "mono",
    placeholder: s.default !== undefined ? JSON.stringify(s.default) : "JSON value",
    spellcheck: "false",
  });
  const { element, error } = frame(name, path, s, required, control, true);
  return {
    element,
    read(errors) {
      let problem: string | null = null;
      let result: Read = ABSENT;
      if (control.value.trim() === "") {
        if (required && s.default === undefined) problem = "Required (as JSON).";
      } else {
        try {
          result = { present: true, value: JSON.parse(control.value) };
        } catch (err) {
          problem = `Not valid JSON: ${(err as Error).message}`;
        }
      }
      setError(element, error, problem);
      if (problem) errors.push(`${path}: ${problem}`);
      return result;
    },
  };
}
