// Named keys a caller can send to a terminal, mapped to the bytes a real terminal would send.
const NAMED: Record<string, string> = {
  enter: "\r",
  return: "\r",
  tab: "\t",
  escape: "\x1b",
  esc: "\x1b",
  backspace: "\x7f",
  space: " ",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~",
  insert: "\x1b[2~",
  delete: "\x1b[3~",
  f1: "\x1bOP",
  f2: "\x1bOQ",
  f3: "\x1bOR",
  f4: "\x1bOS",
  f5: "\x1b[15~",
  f6: "\x1b[17~",
  f7: "\x1b[18~",
  f8: "\x1b[19~",
  f9: "\x1b[20~",
  f10: "\x1b[21~",
  f11: "\x1b[23~",
  f12: "\x1b[24~",
};

// the named keys, said in keys' description and in the error for an unknown key (which adds the Ctrl aliases)
export const KEY_HELP =
  "Enter, Tab, Escape, Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12, " + "Ctrl-<letter or one of @[\\]^_>";

/** The bytes for a key name, or undefined when the name is not known. */
export function keyBytes(name: string): string | undefined {
  const key = name.trim();
  const ctrl = /^(?:ctrl[-+]|c-|\^)(.)$/i.exec(key);
  if (ctrl) {
    const code = ctrl[1].toUpperCase().charCodeAt(0);
    // Ctrl turns @ A-Z [ \ ] ^ _ (0x40-0x5f) into control codes 0x00-0x1f.
    return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code & 0x1f) : undefined;
  }
  return NAMED[key.toLowerCase()];
}
