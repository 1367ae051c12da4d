// A live view's client: connects to a view's socket (/live/<token>/socket), draws the tab's frames
// on a canvas (or a terminal's output with xterm.js), says where the agent is, and while the person
// holds control sends their pointer and keys, in the page's CSS pixels, mapped through each frame's
// metadata. Shared by the view's own page (./view.ts) and the MCP App (./app.ts), which give it
// their elements and the socket's URL.
import { Terminal } from "@xterm/xterm";

interface Metadata {
  deviceWidth: number;
  deviceHeight: number;
  offsetTop: number;
}

/** The elements a view draws into: the same ids in the page and the app. */
export interface LiveElements {
  stage: HTMLElement;
  canvas: HTMLCanvasElement;
  terminalBox: HTMLDivElement;
  button: HTMLButtonElement;
  status: HTMLElement;
  where: HTMLElement;
  what: HTMLElement;
}

export function elementsOf(doc: Document): LiveElements {
  const $ = <T extends HTMLElement>(id: string) => doc.getElementById(id) as T;
  return {
    stage: $("stage"),
    canvas: $("screen"),
    terminalBox: $("terminal"),
    button: $("control"),
    status: $("status"),
    where: $("where"),
    what: $("what"),
  };
}

/** What a view saw (tests and curious people read it), and how to stop watching. */
export type LiveState = ReturnType<typeof watch>["state"];

/** Watch the view whose socket is at `socketUrl`, drawing into `ui`. */
export function watch(socketUrl: string, ui: LiveElements) {
  const { stage, canvas, terminalBox, button, status, where, what } = ui;
  // the document's own listener ends with the view: an app may watch several views in turn
  const listening = new AbortController();
  const state = {
    frames: 0,
    kind: "" as "" | "browser" | "terminal",
    holder: "agent",
    url: "",
    title: "",
    tab: undefined as number | undefined,
    closed: "",
    events: [] as string[],
  };
  const socket = new WebSocket(socketUrl);
  socket.binaryType = "arraybuffer";
  const send = (message: object) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));
  let metadata: Metadata | undefined;
  let terminal: Terminal | undefined;

  socket.onopen = () => {
    send({ type: "hello", width: Math.round(stage.clientWidth * devicePixelRatio), height: Math.round(stage.clientHeight * devicePixelRatio) });
  };
  socket.onclose = () => {
    if (!state.closed) state.closed = "the connection closed";
    status.textContent = `Ended: ${state.closed}`;
    button.disabled = true;
  };
  socket.onmessage = (message) => {
    if (message.data instanceof ArrayBuffer) return void drawFrame(message.data);
    const event = JSON.parse(String(message.data)) as Record<string, unknown>;
    switch (event.type) {
      case "opened":
        return opened(event);
      case "control":
        return control(String(event.holder), event.refused === true);
      case "navigated":
      case "switched":
        return page(event);
      case "output":
        return output(String(event.data), event.reset === true);
      case "closed":
        state.closed = String(event.why);
        status.textContent = `Ended: ${state.closed}`;
        return;
    }
  };

  function say(text: string): void {
    state.events.push(text);
    status.textContent = text;
  }

  function opened(event: Record<string, unknown>): void {
    state.kind = event.kind === "terminal" ? "terminal" : "browser";
    if (state.kind === "terminal") {
      what.textContent = `Terminal ${String(event.terminal)}`;
      terminalBox.hidden = false;
      terminal = new Terminal({ cols: Number(event.cols) || 80, rows: Number(event.rows) || 24, disableStdin: true, convertEol: false });
      terminal.open(terminalBox);
      terminal.onData((text) => state.holder === "you" && send({ type: "input", event: { type: "text", text } }));
    } else {
      what.textContent = `Tab ${String(event.tab)}`;
      canvas.hidden = false;
      page({ type: "opened", url: event.url, title: event.title, tab: event.tab });
    }
    control(String(event.holder), false);
    say("Watching");
  }

  function page(event: Record<string, unknown>): void {
    state.url = String(event.url ?? "");
    state.title = String(event.title ?? "");
    where.textContent = `${state.title || "(no title)"} — ${state.url}`;
    if (event.type === "switched") {
      state.tab = Number(event.tab);
      what.textContent = `Tab ${state.tab}`;
      say(`The agent switched to tab ${state.tab}`);
    } else if (event.type === "navigated") say(`Navigated to ${state.url}`);
  }

  function control(holder: string, refused: boolean): void {
    state.holder = holder;
    document.body.classList.toggle("holding", holder === "you");
    button.disabled = holder === "another person";
    button.textContent = holder === "you" ? "Hand back" : holder === "another person" ? "Another person has control" : "Take over";
    if (terminal) terminal.options.disableStdin = holder !== "you";
    if (refused) say("Another person has control");
    else say(holder === "you" ? "You have control" : holder === "agent" ? "The agent has control" : "Another person has control");
    if (holder === "you") (terminal ?? canvas).focus();
  }

  button.onclick = () => send({ type: "control", take: state.holder !== "you" });

  async function drawFrame(data: ArrayBuffer): Promise<void> {
    const size = new DataView(data).getUint32(0);
    metadata = JSON.parse(new TextDecoder().decode(new Uint8Array(data, 4, size))) as Metadata;
    const bitmap = await createImageBitmap(new Blob([new Uint8Array(data, 4 + size)], { type: "image/jpeg" }));
    if (canvas.width !== bitmap.width || canvas.height !== bitmap.height) {
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
    }
    canvas.getContext("2d")!.drawImage(bitmap, 0, 0);
    bitmap.close();
    state.frames++;
    send({ type: "ack" });
  }

  function output(data: string, reset: boolean): void {
    if (!terminal) return;
    if (reset) terminal.reset();
    terminal.write(data, () => send({ type: "ack" }));
  }

  // ---- a person's input, while they hold control ----

  /** A point of the canvas as the page's CSS pixels: the frame is the viewport, scaled to the canvas's box. */
  function pagePoint(event: MouseEvent): { x: number; y: number } | undefined {
    if (!metadata) return undefined;
    const box = canvas.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * metadata.deviceWidth;
    const y = ((event.clientY - box.top) / box.height) * metadata.deviceHeight;
    return { x: Math.round(x * 100) / 100, y: Math.round(y * 100) / 100 };
  }

  const BUTTONS = ["left", "middle", "right"] as const;
  const holding = () => state.holder === "you" && state.kind === "browser";
  let moveQueued: MouseEvent | undefined;

  function mouse(action: "move" | "down" | "up", event: MouseEvent): void {
    const point = pagePoint(event);
    if (!point || !holding()) return;
    send({
      type: "input",
      event: { type: "mouse", action, ...point, button: BUTTONS[event.button] ?? "left", clickCount: Math.min(3, Math.max(1, event.detail)) },
    });
  }

  canvas.addEventListener("pointermove", (event) => {
    // one move per animation frame: the newest position wins
    if (!holding()) return;
    if (!moveQueued)
      requestAnimationFrame(() => {
        const latest = moveQueued;
        moveQueued = undefined;
        if (latest) mouse("move", latest);
      });
    moveQueued = event;
  });
  canvas.addEventListener("pointerdown", (event) => {
    if (!holding()) return;
    canvas.focus();
    event.preventDefault();
    mouse("down", event);
  });
  canvas.addEventListener("pointerup", (event) => holding() && (event.preventDefault(), mouse("up", event)));
  canvas.addEventListener("contextmenu", (event) => holding() && event.preventDefault());
  canvas.addEventListener(
    "wheel",
    (event) => {
      const point = pagePoint(event);
      if (!point || !holding()) return;
      event.preventDefault();
      send({ type: "input", event: { type: "mouse", action: "wheel", ...point, deltaX: event.deltaX, deltaY: event.deltaY } });
    },
    { passive: false },
  );

  function key(action: "down" | "up", event: KeyboardEvent): void {
    if (!holding()) return;
    // a paste shortcut is left to the browser: its paste event carries the text
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "v") return;
    if (event.key === "Unidentified" || event.key === "Dead" || event.key.length > 32) return;
    event.preventDefault();
    send({ type: "input", event: { type: "key", action, key: event.key } });
  }
  canvas.addEventListener("keydown", (event) => key("down", event));
  canvas.addEventListener("keyup", (event) => key("up", event));
  document.addEventListener(
    "paste",
    (event) => {
      const text = event.clipboardData?.getData("text/plain");
      if (!text || !holding()) return;
      event.preventDefault();
      send({ type: "input", event: { type: "text", text: text.slice(0, 16 * 1024) } });
    },
    { signal: listening.signal },
  );

  return {
    state,
    close: () => {
      listening.abort();
      socket.close();
    },
  };
}
