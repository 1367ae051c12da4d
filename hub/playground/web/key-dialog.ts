// Asks for the hub's API key (AGENTBOX_API_KEY) when the hub answers 401. The key is kept in
// sessionStorage by the caller: it is gone when the tab closes and never written to disk.
import { h } from "./dom.js";

export function askForKey(problem?: string): Promise<string> {
  return new Promise((resolve) => {
    const input = h("input", { type: "password", name: "api-key", id: "api-key", autocomplete: "off", required: true, placeholder: "API key" });
    const form = h(
      "form",
      { method: "dialog", class: "key-form" },
      h("h2", null, "This hub needs an API key"),
      h("p", { class: "muted" }, "Enter the key the hub was started with (AGENTBOX_API_KEY). It is kept only in this tab and sent as Authorization: Bearer."),
      problem ? h("p", { class: "field-error", role: "alert" }, problem) : null,
      h("label", { for: "api-key" }, "API key"),
      input,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Connect")),
    );
    const dialog = h("dialog", { class: "key-dialog" }, form);
    // a key dialog that could be dismissed would leave a page that can do nothing
    dialog.addEventListener("cancel", (e) => e.preventDefault());
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      dialog.close();
      dialog.remove();
      resolve(key);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    input.focus();
  });
}
