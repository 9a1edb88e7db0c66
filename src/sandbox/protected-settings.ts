/**
 * Protected settings inside files that are otherwise the project's own: the file tools' gate asks a
 * person for a change that adds or changes one of them (`protectedSetting`), not for every change
 * to the file, and aftercare puts back a file a command changed so.
 *
 * Each file is read as its tool reads it — JSON, YAML, TOML, INI as Python's configparser does
 * (`key = value` or `key: value`, indented continuation lines), `.tool-versions` as asdf does — and
 * the values at the protected
 * keys are compared, so neither a value moved onto a line of its own, nor a key spelled another way
 * (`"init\u002dhook"`, `init_hook`, a dotted or inline TOML table), nor a byte-order mark hides one.
 */
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { foldName, sameName } from "./names.js";
import type { ProtectedPath } from "./protected.js";

/** One key of a parsed config file: where it sits (its sections, `.`-joined, lower case) and its value. */
interface Entry {
  at: string;
  key: string;
  value: unknown;
}

/**
 * Settings in a project's shared config files that make a tool run code: a linter or type checker
 * an editor runs on open, a git hook the project installed, a version manager's shim. The files are the project's own
 * and the agent edits them, so only a change to what `pick` selects needs a person.
 */
export const PROTECTED_SETTINGS: ReadonlyArray<{
  files: string[];
  pick: (e: Entry) => boolean;
  why: string;
}> = [
  {
    files: ["pyproject.toml", "setup.cfg", "tox.ini"],
    // [tool.pylint.*] in pyproject.toml, [pylint.*] or [tool:pylint] in the INI files
    pick: (e) =>
      /^(tool\.|tool:)?pylint(\.|$)/.test(e.at) &&
      (e.key === "init-hook" || e.key === "load-plugins"),
    why: "pylint runs its init-hook and imports its load-plugins (editors lint on open)",
  },
  {
    files: ["pyproject.toml", "setup.cfg", "mypy.ini", ".mypy.ini"],
    pick: (e) => (e.at === "tool.mypy" || e.at === "mypy") && e.key === "plugins",
    why: "mypy imports the plugins it names (editors type-check on open)",
  },
  {
    files: ["setup.cfg", "tox.ini", ".flake8"],
    pick: (e) => e.at === "flake8:local-plugins",
    why: "flake8 imports the local plugins it names (editors lint on open)",
  },
  {
    // read at every commit by the hook the tool installed (husky 4, yorkie, pre-commit, pre-push,
    // ghooks, lint-staged)
    files: ["package.json", "package.yaml", "package.yml"],
    pick: (e) =>
      (e.at === "" &&
        [
          "husky",
          "githooks",
          "pre-commit",
          "precommit",
          "pre-push",
          "prepush",
          "lint-staged",
        ].includes(e.key)) ||
      (e.at === "config" && e.key === "ghooks"),
    why: "the git hooks installed for the project run the commands it names in your next git commit",
  },
  {
    files: [".rubocop.yml"],
    pick: (e) => e.at === "" && (e.key === "require" || e.key === "plugins"),
    why: "RuboCop loads the Ruby files and plugins it names (editors lint on open)",
  },
  {
    // pnpm reads these as it reads .npmrc's (keys folded: `nodeOptions` is `nodeoptions`)
    files: ["pnpm-workspace.yaml"],
    pick: (e) =>
      e.at === "" &&
      [
        "nodeoptions",
        "scriptshell",
        "dangerouslyallowallbuilds",
        "onlybuiltdependencies",
        "allowbuilds",
        "neverbuiltdependencies",
      ].includes(e.key),
    why: "pnpm runs node with its nodeOptions and scripts in its scriptShell, and the install scripts of the packages it lets build",
  },
  {
    files: [".tool-versions"],
    pick: (e) => e.at === "" && /(^|\s)(path|ref):/.test(String(e.value)),
    why: "asdf's shims run the program a path: version names (a ref: one is built from source)",
  },
];

/** The files' names folded: the look asks of every entry of a workspace (`takesSettings`). */
const SETTINGS_FILES = new Set(PROTECTED_SETTINGS.flatMap((rule) => rule.files.map(foldName)));

/** Whether a file's name, folded (`foldName`), is one `PROTECTED_SETTINGS` covers. */
export const takesSettings = (folded: string): boolean => SETTINGS_FILES.has(folded);

const lastName = (rel: string) =>
  rel
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .at(-1);

/** The rules of `PROTECTED_SETTINGS` a workspace-relative file takes (none for most files). */
export function settingRulesOf(rel: string): typeof PROTECTED_SETTINGS {
  const name = lastName(rel);
  return name === undefined
    ? []
    : PROTECTED_SETTINGS.filter((rule) => rule.files.some((f) => sameName(name, f)));
}

/** Sections and keys as the INI files' readers take them (Python's configparser). */
function parseIni(text: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let section: Record<string, string> | undefined;
  let last: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*([#;]|$)/.test(line)) continue;
    const head = /^\s*\[([^\]]*)\]/.exec(line);
    if (head) {
      section = out[head[1]!.trim()] ??= {};
      last = undefined;
    } else if (/^\s/.test(line) && section && last !== undefined)
      section[last] += `\n${line.trim()}`;
    else {
      const kv = /^\s*([^=:]+?)\s*[=:]\s*(.*)$/.exec(line);
      if (kv && section) section[(last = kv[1]!.toLowerCase())] = kv[2]!;
    }
  }
  return out;
}

/** `.tool-versions` as asdf reads it: a tool and its versions on each line, `#` comments. */
function parseToolVersions(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const [tool, ...versions] = line.replace(/#.*/, "").trim().split(/\s+/);
    if (tool) out[tool] = [out[tool], ...versions].filter(Boolean).join(" ");
  }
  return out;
}

/** A config file's text as its tools read it, by its name; undefined when they could not read it. */
function parsed(name: string, text: string): unknown {
  const t = text.replace(/^\uFEFF/, "");
  try {
    if (sameName(name, "package.json")) return JSON.parse(t);
    if (sameName(name, ".tool-versions")) return parseToolVersions(t);
    if (/\.ya?ml$/i.test(name)) return parseYaml(t);
    if (/\.toml$/i.test(name)) return parseToml(t);
    return parseIni(t);
  } catch {
    return undefined;
  }
}

/** Every key of a parsed document at any depth, its key folded (lower case, `_` as `-`). */
function entries(doc: unknown, at = "", out: Entry[] = []): Entry[] {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) return out;
  for (const [k, value] of Object.entries(doc as Record<string, unknown>)) {
    const key = k.toLowerCase().replace(/_/g, "-");
    out.push({ at, key, value });
    entries(value, at ? `${at}.${key}` : key, out);
  }
  return out;
}

/** A file's entries as its tools read them ([] when empty); undefined when they could not read it. */
function entriesOf(name: string, text: string): Entry[] | undefined {
  const doc = parsed(name, text);
  return doc === undefined && text.trim() !== "" ? undefined : entries(doc);
}

/** What a rule selects of a file's entries, as JSON ("[]" when nothing; undefined when unreadable). */
const picked = (all: Entry[] | undefined, pick: (e: Entry) => boolean) =>
  all && JSON.stringify(all.filter(pick).map((e) => [e.at, e.key, e.value]));

/**
 * Whether a workspace-relative file going from `before` ("" when missing) to `after` adds or
 * changes a setting `PROTECTED_SETTINGS` names (present after, not the same before): the
 * setting, as a protected path. Text its tool could not read sets nothing.
 */
export function protectedSetting(
  rel: string,
  before: string,
  after: string,
): ProtectedPath | undefined {
  const rules = settingRulesOf(rel);
  if (rules.length === 0) return undefined;
  const name = lastName(rel) ?? "";
  const [was, is] = [entriesOf(name, before), entriesOf(name, after)];
  for (const rule of rules) {
    const now = picked(is, rule.pick);
    if (now !== undefined && now !== "[]" && now !== picked(was, rule.pick))
      return { path: rel, why: rule.why };
  }
  return undefined;
}
