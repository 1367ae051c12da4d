// agentbox's own skills (the skills extension, SEP-2640): one per built-in server, teaching an
// agent the way of working its tools' descriptions have no room for (tools/list is read on every
// turn; a skill only when the agent loads it). The hub serves them, under its reserved prefix
// (skill://hub/<server>/SKILL.md), and a session sees a server's skill only if its selection
// shows that server (hub/sessions/skills.ts): served by the hub, they are listed without starting
// a server that starts on first use, and `?servers=`, the configured selection and a sign-in's
// scopes narrow them as they narrow the server's tools.
import { createHash } from "node:crypto";

/** What a skill entry (skills/list, skills/get) holds. */
export interface SkillEntry {
  uri: string;
  frontmatter: { name: string; description: string; [key: string]: unknown };
  resources: Array<{ uri: string; digest: string; size: number }> | "dynamic";
}

interface BuiltinSkill {
  /** The built-in server it teaches, which is also its name. */
  server: string;
  description: string;
  body: string;
}

const SKILLS: BuiltinSkill[] = [
  {
    server: "browser",
    description: "Drive agentbox's Chromium well: snapshot, act by ref, read pages in pages, and debug what a page did.",
    body: `# The browser

Work in a loop: **look, act, look**.

1. \`browser_navigate\` to the URL; it returns the page's accessibility snapshot (YAML), each
   element marked \`[ref=eN]\`.
2. Act on an element by its ref: \`browser_click\`, \`browser_type\`, \`browser_fill\` (several form
   fields at once), \`browser_select_option\`, \`browser_check\`, \`browser_press_key\`. Each action
   returns the new snapshot: read it before the next action; refs of an older snapshot may point
   at nothing.
3. No ref fits (the element is not in the snapshot, or you know the page)? Use \`selector\`: CSS or
   Playwright selectors such as \`text=Sign in\` or \`role=button[name='OK']\`; the first match is used.

Reading:

- Long snapshots and texts are paged: the reply ends with the call for the next page
  (\`offset=nextOffset\`). Prefer \`browser_get_markdown\` or \`browser_get_text\` with a \`ref\` to read
  one part of a page instead of paging the whole.
- \`browser_links\` lists links with absolute URLs; \`browser_screenshot\` shows what a snapshot
  cannot (layout, images, canvas).

Waiting and debugging:

- After something slow (a search, a spinner) use \`browser_wait_for\` with \`text\`, \`textGone\` or a
  \`selector\` rather than \`time\`.
- A page that misbehaves: \`browser_console_messages\` (\`level: "error"\`) and
  \`browser_network_requests\` say what failed. \`browser_evaluate\` runs JavaScript in the page.
- Dialogs (alert, confirm) block the page until \`browser_handle_dialog\` answers them.

Files: pages saved with \`browser_pdf\`, downloads and uploads (\`browser_upload_file\`) are workspace
paths, readable at once with the file tools. Workspace HTML opens with \`browser_navigate\` to
\`file:\` paths. \`browser_close\` starts over with a fresh browser (no cookies).
`,
  },
  {
    server: "file",
    description: "Read, search and change files in agentbox's workspace safely: paging, exact edits, snapshots before risky changes.",
    body: `# The workspace files

- Find before you read: \`file_tree\` for the layout, \`file_find\` for names (globs), \`file_grep\` for
  contents (JavaScript regex; \`literal: true\` for plain text; \`context\` for lines around).
- \`file_read\` reads a window of lines: big files come in pages; continue with
  \`offset=nextOffset\`. \`file_read_many\` reads several small files in one call.
- Change files with \`file_edit\`: exact \`oldText\` (with enough context to be unique) replaced by
  \`newText\`; \`dryRun: true\` shows the diff first. Several edits in one call apply all or none.
  \`file_write\` creates or replaces a whole file atomically.
- Before a risky change to many files, \`file_snapshot_take\` a named snapshot;
  \`file_snapshot_restore\` brings the workspace back exactly.
- \`file_changes\` tells what anything (the terminal, code, downloads) changed lately: call it once
  to start, then pass its \`next\` as \`since\`.
- Paths are relative to the workspace (absolute paths inside it work too); nothing outside it can
  be reached.
`,
  },
  {
    server: "terminal",
    description: "Run commands in agentbox: terminal_exec for one-shot commands, terminal sessions for long-running and interactive programs.",
    body: `# The terminal

Pick the tool by what the program does:

- **One command that ends** (a build, tests, \`git status\`, \`pip list\`): \`terminal_exec\`. It returns
  the exit code, stdout and stderr apart. Give a \`timeoutMs\` for slow ones; when it ends, the
  processes it left in the background are killed.
- **A program that keeps running** (a dev server, a watcher) **or that you talk to** (python3, a
  REPL, \`top\`, an installer asking questions): \`terminal_session_create\`, then
  \`terminal_session_send\` to type (\`input: "ls\\n"\`, or \`keys: ["Ctrl-C"]\`).

Reading a session:

- Send with \`waitFor\` (a regex such as \`'\\\\$ $'\` or \`'>>> $'\`) or \`quietMs\` to get the output that
  follows in the same call; \`terminal_session_read\` reads later (\`mode: "tail"\` for the last lines).
- \`terminal_session_list\` shows your terminals and unread output; \`terminal_session_kill\` ends one
  with everything it started.
- A dev server on a port can be opened by a person with \`hub_preview\`.
`,
  },
  {
    server: "code",
    description: "Run Python or JavaScript in agentbox like notebook cells: kept state, figures, packages, and calling tools from code.",
    body: `# Code

- \`code_execute\` runs a cell; variables and imports persist between calls of one \`session\` (per
  language). The last expression's value is returned; matplotlib figures come back as images.
- Packages: \`code_install\` (pip or npm). A Python module already imported needs \`code_reset\`
  before the new version loads.
- Loops over many files or many tool calls are cheaper in code than call by call: from Python,
  \`from agentbox import tools; tools.file_read(path="a.txt")\`; from JavaScript,
  \`await tools.file_read({ path: "a.txt" })\`.
- Long work: pass \`timeoutMs\`; a timeout interrupts the code and the reply says whether the state
  survived. A stuck or broken session: \`code_reset\`. \`code_sessions\` lists yours.
- The working directory is the workspace: files the code writes are readable with the file tools.
`,
  },
  {
    server: "markitdown",
    description: "Turn documents (PDF, Word, Excel, HTML, ...) into Markdown with agentbox, paged or saved whole.",
    body: `# Converting documents

- \`markitdown_convert\` takes a workspace path, an http(s) URL or a data: URI as \`source\` (or
  base64 \`content\` with a \`name\`), and returns Markdown.
- Long documents come in pages of characters: continue with \`offset=nextOffset\`. To read a long
  document in parts, or search it, write it whole with \`saveTo\` and use the file tools
  (\`file_grep\`, \`file_read\`) on the result.
- \`markitdown_formats\` lists what can be converted.
`,
  },
  {
    server: "arxiv",
    description: "Find, fetch and read arXiv papers with agentbox: search syntax, downloading once, reading in pages.",
    body: `# arXiv

1. \`arxiv_search\`: plain words (all must match) or arXiv syntax: \`ti:\`, \`au:\`, \`abs:\`, \`cat:\` with
   AND, OR, ANDNOT, e.g. \`ti:transformer AND cat:cs.CL\`. Narrow with \`categories\` and dates; sort
   by \`submitted\` for the newest.
2. \`arxiv_get\` gives full metadata for ids you already have.
3. \`arxiv_download\` fetches a paper's PDF into papers/ and converts it to Markdown once.
4. \`arxiv_read\` pages through that text (\`offset=nextOffset\`); the files are also workspace files
   for \`file_grep\`. \`arxiv_list\` shows what is downloaded.
`,
  },
];

/** The first segment of the hub's own skill URIs: "hub" names the hub's own tools too, so no server has it as its prefix. */
export const HUB_SKILL_PREFIX = "hub";

export interface ServedSkill {
  server: string;
  entry: SkillEntry;
  text: string;
}

function served(skill: BuiltinSkill): ServedSkill {
  const text = `---\nname: ${skill.server}\ndescription: ${JSON.stringify(skill.description)}\n---\n\n${skill.body}`;
  const uri = `skill://${HUB_SKILL_PREFIX}/${skill.server}/SKILL.md`;
  const bytes = Buffer.from(text, "utf8");
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  return {
    server: skill.server,
    text,
    entry: { uri, frontmatter: { name: skill.server, description: skill.description }, resources: [{ uri, digest, size: bytes.length }] },
  };
}

/** Every built-in skill, by the server it teaches. */
export const BUILTIN_SKILLS: readonly ServedSkill[] = SKILLS.map(served);
