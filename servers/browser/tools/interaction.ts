// Acting on elements. Every tool takes the same target (ref or selector), acts, lets the page
// settle and returns a fresh snapshot.
import { z } from "zod";
import { ToolError } from "../../lib/tool.js";
import { relativeToWorkspace, resolveInWorkspace } from "../../lib/workspace.js";
import { locate, target } from "../locate.js";
import { pageReply } from "../response.js";
import { browserTool, perform } from "../runtime.js";

const modifiers = z
  .array(z.enum(["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]))
  .optional()
  .describe("Modifier keys to hold");
const acting = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;

const click = browserTool({
  name: "click",
  title: "Click",
  description: "Click an element; returns the new snapshot.",
  input: {
    ...target,
    double: z.boolean().default(false).describe("Double-click"),
    button: z.enum(["left", "right", "middle"]).default("left"),
    modifiers,
  },
  annotations: { ...acting },
  async run({ ref, selector, double, button, modifiers }, b) {
    const page = await b.page();
    const el = await locate(page, { ref, selector });
    await perform(b, page, () => (double ? el.dblclick({ button, modifiers }) : el.click({ button, modifiers })));
    return pageReply(b, { result: `${double ? "Double-clicked" : "Clicked"} ${ref ?? selector}.` });
  },
});

const hover = browserTool({
  name: "hover",
  title: "Hover",
  description: "Move the mouse over an element.",
  input: { ...target },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ ref, selector }, b) {
    const page = await b.page();
    const el = await locate(page, { ref, selector });
    await perform(b, page, () => el.hover());
    return pageReply(b, { result: `Hovering over ${ref ?? selector}.` });
  },
});

const type = browserTool({
  name: "type",
  title: "Type",
  description: "Type into an editable element, replacing its content unless slowly.",
  input: {
    ...target,
    text: z.string(),
    submit: z.boolean().default(false).describe("Press Enter after"),
    slowly: z.boolean().default(false).describe("One key at a time (fires key handlers; appends)"),
  },
  annotations: { ...acting },
  async run({ ref, selector, text, submit, slowly }, b) {
    const page = await b.page();
    const el = await locate(page, { ref, selector }, "editable element");
    await perform(b, page, async () => {
      if (slowly) await el.pressSequentially(text, { delay: 30 });
      else await el.fill(text);
      if (submit) await el.press("Enter");
    });
    return pageReply(b, { result: `Typed ${JSON.stringify(text)} into ${ref ?? selector}${submit ? " and pressed Enter" : ""}.` });
  },
});

const field = z.object({
  ...target,
  value: z.string().describe('Text; "true"/"false" for checkboxes and radios; an option label or value for selects'),
});

const fill = browserTool({
  name: "fill",
  title: "Fill form",
  description: "Fill several form fields at once (text boxes, checkboxes, radios, selects).",
  input: { fields: z.array(field).min(1).describe("Each with ref or selector, and value") },
  annotations: { ...acting, idempotentHint: true },
  async run({ fields }, b) {
    const page = await b.page();
    const done: string[] = [];
    await perform(b, page, async () => {
      for (const f of fields) {
        const el = await locate(page, f, "form field");
        const kind = await el.evaluate((node) => {
          const tag = node.tagName.toLowerCase();
          return tag === "input" ? ((node as HTMLInputElement).type || "text").toLowerCase() : tag;
        });
        if (kind === "checkbox" || kind === "radio") await el.setChecked(/^(true|on|yes|1|checked)$/i.test(f.value));
        else if (kind === "select") await el.selectOption(f.value);
        else await el.fill(f.value);
        done.push(`${f.ref ?? f.selector} = ${JSON.stringify(f.value)}`);
      }
    });
    return pageReply(b, { result: `Filled ${done.join(", ")}.` });
  },
});

const selectOption = browserTool({
  name: "select_option",
  title: "Select option",
  description: "Choose one or more options in a <select> by label or value.",
  input: { ...target, values: z.array(z.string()).min(1).describe("Labels or values") },
  annotations: { ...acting, idempotentHint: true },
  async run({ ref, selector, values }, b) {
    const page = await b.page();
    const el = await locate(page, { ref, selector }, "select");
    let chosen: string[] = [];
    await perform(b, page, async () => {
      // Try values first, then labels: the model sees labels in the snapshot.
      chosen = await el.selectOption(values).catch(() => el.selectOption(values.map((label) => ({ label }))));
    });
    return pageReply(b, { result: `Selected ${chosen.map((v) => JSON.stringify(v)).join(", ")} in ${ref ?? selector}.` });
  },
});

function checkTool(name: "check" | "uncheck") {
  return browserTool({
    name,
    title: name === "check" ? "Check" : "Uncheck",
    description: `${name === "check" ? "Check" : "Uncheck"} a checkbox or radio button.`,
    input: { ...target },
    annotations: { ...acting, idempotentHint: true },
    async run({ ref, selector }, b) {
      const page = await b.page();
      const el = await locate(page, { ref, selector }, "checkbox");
      await perform(b, page, () => el.setChecked(name === "check"));
      return pageReply(b, { result: `${name === "check" ? "Checked" : "Unchecked"} ${ref ?? selector}.` });
    },
  });
}

const pressKey = browserTool({
  name: "press_key",
  title: "Press key",
  description: "Press a key on the element given, else on the focused one.",
  input: { ...target, key: z.string().describe("Key or chord: Enter, ArrowDown, Shift+Tab, Control+a, a") },
  annotations: { ...acting },
  async run({ ref, selector, key }, b) {
    const page = await b.page();
    const el = ref || selector ? await locate(page, { ref, selector }) : undefined;
    await perform(b, page, () => (el ? el.press(key) : page.keyboard.press(key)));
    return pageReply(b, { result: `Pressed ${key}${el ? ` on ${ref ?? selector}` : ""}.` });
  },
});

const scroll = browserTool({
  name: "scroll",
  title: "Scroll",
  description: "Scroll an element into view (target alone), inside it (target and deltas), or the page by pixels (deltas alone).",
  input: {
    ...target,
    deltaX: z.number().default(0).describe("Pixels right (negative: left)"),
    deltaY: z.number().default(0).describe("Pixels down (negative: up)"),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run({ ref, selector, deltaX, deltaY }, b) {
    const page = await b.page();
    const el = ref || selector ? await locate(page, { ref, selector }) : undefined;
    // scrollBy rather than the mouse wheel: the wheel returns before the scroll happens.
    await perform(b, page, async () => {
      if (el && !deltaX && !deltaY) return el.scrollIntoViewIfNeeded();
      if (el) return el.evaluate((node, d) => node.scrollBy(d.x, d.y), { x: deltaX, y: deltaY });
      return page.evaluate((d) => window.scrollBy(d.x, d.y), { x: deltaX, y: deltaY });
    });
    const pos = await page.evaluate(() => ({ x: Math.round(window.scrollX), y: Math.round(window.scrollY) }));
    return pageReply(b, { result: `Scrolled; page scroll position is x=${pos.x}, y=${pos.y}.` });
  },
});

const drag = browserTool({
  name: "drag",
  title: "Drag",
  description: "Drag one element onto another.",
  input: {
    startRef: z.string().optional().describe("Ref of what to drag"),
    startSelector: z.string().optional().describe("Or its selector"),
    endRef: z.string().optional().describe("Ref of the target"),
    endSelector: z.string().optional().describe("Or its selector"),
  },
  annotations: { ...acting },
  async run({ startRef, startSelector, endRef, endSelector }, b) {
    const page = await b.page();
    const from = await locate(page, { ref: startRef, selector: startSelector }, "element to drag");
    const to = await locate(page, { ref: endRef, selector: endSelector }, "drop target");
    await perform(b, page, () => from.dragTo(to));
    return pageReply(b, { result: `Dragged ${startRef ?? startSelector} to ${endRef ?? endSelector}.` });
  },
});

const uploadFile = browserTool({
  name: "upload_file",
  title: "Upload file",
  description: "Set the files of a file input (or of the file chooser a button opens).",
  input: { ...target, paths: z.array(z.string()).describe("Workspace paths; [] clears the input") },
  annotations: { ...acting },
  async run({ ref, selector, paths }, b) {
    const files = paths.map((p) => resolveInWorkspace(b.workspace, p));
    const page = await b.page();
    const el = await locate(page, { ref, selector }, "file input");
    const isInput = await el.evaluate((node) => node instanceof HTMLInputElement && node.type === "file");
    await perform(b, page, async () => {
      if (isInput) return el.setInputFiles(files);
      // A styled button: click it and answer the chooser it opens.
      const [chooser] = await Promise.all([page.waitForEvent("filechooser"), el.click()]);
      await chooser.setFiles(files);
    });
    const names = files.map((f) => relativeToWorkspace(b.workspace, f));
    return pageReply(b, { result: names.length ? `Set files: ${names.join(", ")}.` : "Cleared the file input." });
  },
});

const handleDialog = browserTool({
  name: "handle_dialog",
  title: "Handle dialog",
  description: "Answer the open alert, confirm, prompt or beforeunload dialog.",
  input: {
    accept: z.boolean().describe("true: OK; false: Cancel"),
    promptText: z.string().optional().describe("Text for a prompt dialog"),
  },
  annotations: { ...acting },
  async run({ accept, promptText }, b) {
    const dialog = b.dialog;
    if (!dialog) throw new ToolError("No dialog is open.");
    b.dialog = undefined;
    const what = `${accept ? "Accepted" : "Dismissed"} the ${dialog.type()} dialog "${dialog.message()}"${promptText !== undefined && accept ? ` with ${JSON.stringify(promptText)}` : ""}.`;
    const page = dialog.page() ?? (await b.page({ allowDialog: true }));
    const blocked = b.blockedAction;
    b.blockedAction = undefined;
    await perform(b, page, async () => {
      await (accept ? dialog.accept(promptText) : dialog.dismiss());
      await blocked;
    });
    return pageReply(b, { result: what });
  },
});

export default [click, hover, type, fill, selectOption, checkTool("check"), checkTool("uncheck"), pressKey, scroll, drag, uploadFile, handleDialog];
