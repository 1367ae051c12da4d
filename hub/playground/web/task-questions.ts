// A task's questions (input_required): each elicitation/create of its child as a form built from the
// question's requestedSchema, answered Accept (with the form's values) or Decline; once every question
// has an answer they go back together with tasks/update. The question's words come from a tool's
// server, so they are shown as text, never as markup. A question the page cannot answer (sampling,
// roots) says so: the call can still be cancelled.
import { h, replace } from "./dom.js";
import { buildForm, type JsonSchema } from "./schema-form.js";
import type { InputRequest } from "./task-calls.js";

export function taskQuestions(requests: Record<string, InputRequest>, answer: (responses: Record<string, unknown>) => Promise<void>): HTMLElement {
  const responses: Record<string, unknown> = {};
  const keys = Object.keys(requests);
  const element = h("section", { class: "task-questions", "data-state": "asking" });
  const status = h("p", { class: "muted task-questions-status" });
  const answered = async (key: string, response: unknown) => {
    responses[key] = response;
    if (keys.some((k) => !(k in responses))) return;
    element.dataset.state = "sending";
    try {
      await answer(responses);
      element.dataset.state = "answered";
      replace(element, h("p", { class: "muted" }, "Answered; the task goes on."));
    } catch (err) {
      element.dataset.state = "failed";
      replace(status, `Could not send the answers: ${(err as Error).message}`);
    }
  };
  const questions = keys.map((key) => question(key, requests[key]!, (response) => void answered(key, response)));
  replace(element, h("h3", null, "The task asks"), questions, status);
  return element;
}

function question(key: string, request: InputRequest, respond: (response: unknown) => void): HTMLElement {
  const params = request.params ?? {};
  if (request.method !== "elicitation/create" || params.mode === "url")
    return h(
      "div",
      { class: "task-question", "data-key": key, "data-method": request.method },
      h("p", null, `The tool's server asks ${request.method}, which the playground cannot answer: cancel the call to end the task.`),
    );
  const form = buildForm((params.requestedSchema ?? { type: "object", properties: {} }) as JsonSchema);
  const problem = h("p", { class: "field-error", hidden: true });
  const accept = h("button", { type: "submit", class: "primary", "data-action": "accept" }, "Accept");
  const decline = h("button", { type: "button", class: "secondary", "data-action": "decline" }, "Decline");
  const el = h(
    "form",
    { class: "task-question", "data-key": key, "data-method": request.method, novalidate: true },
    h("p", { class: "task-question-message" }, String(params.message ?? "")),
    form.element,
    problem,
    h("div", { class: "actions" }, accept, decline),
  );
  const done = (response: unknown, label: string) => {
    accept.disabled = decline.disabled = true;
    el.dataset.answered = label;
    respond(response);
  };
  el.addEventListener("submit", (e) => {
    e.preventDefault();
    const values = form.read();
    if (!values.ok) {
      problem.hidden = false;
      problem.textContent = values.errors.join("; ");
      return;
    }
    done({ action: "accept", content: values.value }, "accept");
  });
  decline.addEventListener("click", () => done({ action: "decline" }, "decline"));
  return el;
}
