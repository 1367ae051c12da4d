// The live view's page: watches the view its URL names (./client.ts does the drawing and the
// person's input). `window.liveView` exposes what the page saw, for tests and curious people.
import { elementsOf, watch, type LiveState } from "./client.js";

declare global {
  interface Window {
    liveView: LiveState;
  }
}

const token = location.pathname.split("/")[2] ?? "";
window.liveView = watch(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/live/${token}/socket`, elementsOf(document)).state;
