/**
 * A git config read as git reads it (config.c), pure: which keys a repository a sandboxed command
 * created or changed may keep (`SAFE_GIT_CONFIG`), and its text without the others. Applied by
 * aftercare.ts after every command.
 */

/**
 * The keys a repository a command created or changed may keep in its git config (`section.key`,
 * lower case, a subsection in the middle): those git writes itself (`init`, `clone`, `submodule`,
 * `worktree`, `remote`, `branch`), who commits, and settings that change only how git shows or
 * merges. Every other key a command added is removed: git has dozens that run a program
 * (`core.fsmonitor`, `alias.*`, filter drivers, `gpg.ssh.defaultKeyCommand`…), and a list of
 * those is never finished. Not `extensions.partialClone` nor a remote's `promisor`: with them, an
 * object a command deleted makes the next `git status` fetch from a remote.
 */
export const SAFE_GIT_CONFIG =
  /^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|compression|whitespace|abbrev|checkstat|trustctime|untrackedcache|splitindex|commitgraph|multipackindex|sparsecheckout|sparsecheckoutcone|longpaths)|extensions\.(objectformat|worktreeconfig|refstorage|preciousobjects)|(user|author|committer)\.(name|email)|remote\..+\.(url|pushurl|fetch|push|mirror|tagopt|prune)|branch\..+\.(remote|merge|rebase|pushremote|description)|submodule\..+\.(url|active|branch)|submodule\.active|lfs\.repositoryformatversion|init\.defaultbranch|pull\.(rebase|ff)|push\.(default|autosetupremote)|fetch\.prune|merge\.(ff|conflictstyle)|rebase\.autostash|rerere\.enabled|diff\.(algorithm|renames)|status\.showuntrackedfiles|log\.date|color\..+|advice\..+|gc\.auto)$/;

/** URL keys: their value must name a transport git runs no helper for (`safeUrl`). */
const URL_KEY = /\.(url|pushurl)$/;

/** The transports git serves itself (`git+ssh` and `ssh+git` are ssh). */
const OWN_SCHEMES = new Set([
  "http",
  "https",
  "ssh",
  "git",
  "file",
  "ftp",
  "ftps",
  "git+ssh",
  "ssh+git",
]);

/**
 * Whether a URL value (as git reads it: `gitValue`) names no remote helper: not `<name>::…`
 * (git runs `git-remote-<name>`, found on a PATH that may hold the workspace's
 * `node_modules/.bin`), and a `<scheme>://` only of a transport git serves itself (any other
 * scheme is handed to `git-remote-<scheme>` too). An scp-like `host:path` or a path is safe.
 */
export function safeUrl(value: string): boolean {
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(value)) return false;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1];
  return scheme === undefined || OWN_SCHEMES.has(scheme.toLowerCase());
}

/**
 * Whether a URL a command gave a remote or submodule may stay: it names no remote helper
 * (`safeUrl`) and is not a folder or `file://` URL — the person's next `git pull` or
 * `git submodule update` would take commits a command left there (a bare repository in the
 * workspace), outside the sandbox.
 */
export function fetchableUrl(value: string): boolean {
  if (!safeUrl(value) || /^file:/i.test(value)) return false;
  if (value.includes("://")) return true;
  const colon = value.indexOf(":");
  return colon > 0 && !value.slice(0, colon).includes("/"); // scp-like host:path
}

/**
 * A config value as git reads it (config.c's parse_value): leading blanks skipped, quotes removed,
 * `\\`, `\"`, `\n`, `\t`, `\b` unescaped, a `#` or `;` outside quotes ending it, trailing blanks
 * outside quotes dropped. `raw` is what follows the `=`.
 */
export function gitValue(raw: string): string {
  let out = "";
  let quoted = false;
  let blanks = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (!quoted && (c === "#" || c === ";")) break;
    if (!quoted && (c === " " || c === "\t")) {
      if (out !== "") blanks += c;
      continue;
    }
    out += blanks;
    blanks = "";
    if (c === "\\") {
      const next = raw[++i];
      out += next === "n" ? "\n" : next === "t" ? "\t" : next === "b" ? "\b" : (next ?? "");
    } else if (c === '"') quoted = !quoted;
    else out += c;
  }
  return out;
}

/**
 * A git config's text without the keys `SAFE_GIT_CONFIG` does not list, and the keys removed. A key
 * line (in its section, subsection case kept) that is in `kept` stays: a config a command changed
 * keeps what it had before. Understands git's INI form (`[section]`, `[section "sub"]`,
 * `key = value`). A line it cannot read as a header, a comment or a listed key goes; so does a line
 * with a control character (git stops a name at a NUL: `[remote "x.uploadpack\0"]` is
 * `remote.x.uploadpack` to it), a line that ends in a backslash and the lines git would read as
 * that value's continuation, and a URL naming a remote helper or a folder (`fetchableUrl`) — or, with
 * `keepNoNewUrl` (a repository that was there before the command: the person's), any URL it added
 * or changed, since the person's next pull would fetch from it. Every line left is read by git as
 * it is read here, whatever line came before it.
 */
export function withoutUnsafeGitConfig(
  text: string,
  kept: ReadonlySet<string> = new Set(),
  keepNoNewUrl = false,
): { text: string; removed: string[] } {
  const removed: string[] = [];
  const out: string[] = [];
  for (const { line, head, name, exact, value, continued } of gitConfigLines(text)) {
    if (continued) continue;
    const rest = head ? line.slice(head.length) : line;
    const note = name === undefined && head !== null && /^[ \t]*([#;][^\n]*)?\r?$/.test(rest);
    const allowed =
      note ||
      (name !== undefined &&
        ((SAFE_GIT_CONFIG.test(name) &&
          !(URL_KEY.test(name) && (keepNoNewUrl || !fetchableUrl(value ?? "")))) ||
          kept.has(`${exact}\0${line}`)));
    if (allowed && !endsInBackslash(line)) {
      out.push(line);
      continue;
    }
    if (!note)
      removed.push(
        name ?? `a line git may read otherwise ("${printable(line.trim().slice(0, 40))}")`,
      );
    if (head) out.push(head);
  }
  return { text: out.join("\n"), removed };
}

/** Each key line of a git config as `section.subsection.key\0line` (subsection case kept): what `withoutUnsafeGitConfig` keeps. */
export function gitConfigKeys(text: string): Set<string> {
  const keys = new Set<string>();
  for (const { line, exact } of gitConfigLines(text)) if (exact) keys.add(`${exact}\0${line}`);
  return keys;
}

const endsInBackslash = (line: string) => line.replace(/\r$/, "").endsWith("\\");

/** A control character git does not read as a blank (all but tab): a line holding one is not kept. */
const isControl = (code: number) => (code < 32 && code !== 9) || code === 127;
const hasControl = (s: string) => [...s].some((c) => isControl(c.charCodeAt(0)));
const printable = (s: string) => [...s].map((c) => (isControl(c.charCodeAt(0)) ? "?" : c)).join("");

/**
 * A git config's lines, each with its section header (when it starts with one; `null` for a line
 * that cannot be read at all), the key it sets (`section.key`, lower case; `exact` keeps the
 * subsection's case) and its value as git reads it, or whether it continues the line before (which
 * ends in a backslash). A UTF-8 BOM opening the text is skipped, as git skips it.
 */
function* gitConfigLines(text: string) {
  let section = "";
  let exactSection = "";
  let continued = false;
  for (const [i, line] of text.split("\n").entries()) {
    const bom = i === 0 && line.startsWith("\ufeff") ? 1 : 0;
    const read = line.slice(bom).replace(/\r$/, "");
    const bad = hasControl(read);
    const m =
      continued || bad
        ? null
        : /^[ \t]*\[([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\]|\\.)*)")?\]/.exec(read);
    if (m) {
      const sub = m[2] !== undefined ? `.${m[2]}` : "";
      section = `${m[1]}${sub}`.toLowerCase();
      exactSection = `${m[1]!.toLowerCase()}${sub}`;
    }
    const body = m ? read.slice(m[0].length) : read;
    // A key may follow its section header on the same line.
    const key = continued || bad ? null : /^[ \t]*([A-Za-z][A-Za-z0-9-]*)[ \t]*(=|$)/.exec(body);
    yield {
      line,
      head: bad ? null : m ? line.slice(0, bom + m[0].length) : undefined,
      name: key ? `${section}.${key[1]!.toLowerCase()}` : undefined,
      exact: key ? `${exactSection}.${key[1]!.toLowerCase()}` : undefined,
      value: key ? gitValue(body.slice(key[0].length)) : undefined,
      continued,
    };
    continued = endsInBackslash(line);
  }
}
