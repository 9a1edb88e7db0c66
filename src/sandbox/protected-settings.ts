/**
 * Protected settings inside files that are otherwise the project's own: the file tools' gate asks a
 * person for a change that adds or changes one of them (`protectedSetting`), not for every change
 * to the file.
 */
import { foldName, sameName, type ProtectedPath } from "./protected.js";

/**
 * Settings in a project's shared config files that make a tool run code when an editor merely
 * opens the folder (it lints and type-checks on open): the files are the project's own and the
 * agent edits them, so only a line it adds or changes with one of these keys needs a person.
 */
export const PROTECTED_SETTINGS: ReadonlyArray<
  { files: string[]; why: string } & ({ line: RegExp } | { keys: string[][] })
> = [
  {
    files: ["pyproject.toml", "setup.cfg", "tox.ini"],
    line: /^\s*(?:[\w".-]+\.)?"?(?:init[-_]hook|load[-_]plugins)"?\s*=/im,
    why: "pylint runs its init-hook and imports its load-plugins (editors lint on open)",
  },
  {
    files: ["pyproject.toml", "setup.cfg", "mypy.ini", ".mypy.ini"],
    line: /^\s*(?:[\w".-]+\.)?"?plugins"?\s*=/im,
    why: "mypy imports the plugins it names (editors type-check on open)",
  },
  {
    files: ["setup.cfg", "tox.ini", ".flake8"],
    line: /^\s*\[flake8:local-plugins\]/im,
    why: "flake8 imports the local plugins it names (editors lint on open)",
  },
  {
    // read at every commit by the hook the tool installed (husky 4, yorkie, pre-commit, pre-push,
    // ghooks, lint-staged); a JSON file, so the values are compared, not the lines
    files: ["package.json"],
    keys: [
      ["husky"],
      ["gitHooks"],
      ["pre-commit"],
      ["precommit"],
      ["pre-push"],
      ["prepush"],
      ["config", "ghooks"],
      ["lint-staged"],
    ],
    why: "the git hooks installed for the project run the commands it names in your next git commit",
  },
];

/** The files' names folded: the look asks of every entry of a workspace (`takesSettings`). */
const SETTINGS_FILES = new Set(PROTECTED_SETTINGS.flatMap((rule) => rule.files.map(foldName)));

/** Whether a file's name, folded (`foldName`), is one `PROTECTED_SETTINGS` covers. */
export const takesSettings = (folded: string): boolean => SETTINGS_FILES.has(folded);

/** The rules of `PROTECTED_SETTINGS` a workspace-relative file takes (none for most files). */
export function settingRulesOf(rel: string): typeof PROTECTED_SETTINGS {
  const name = rel
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .at(-1);
  return name === undefined
    ? []
    : PROTECTED_SETTINGS.filter((rule) => rule.files.some((f) => sameName(name, f)));
}

/** A rule's line pattern for one line at a time (the rule's is multi-line, for whole texts). */
const oneLine = (re: RegExp) => new RegExp(re.source, "i");

/** The value at `keys` in a JSON text, as JSON; undefined when absent or the text is not JSON. */
function jsonAt(text: string, keys: readonly string[]): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const k of keys)
    v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v === undefined ? undefined : JSON.stringify(v);
}

/**
 * Whether a workspace-relative file going from `before` ("" when missing) to `after` adds or
 * changes a setting `PROTECTED_SETTINGS` names: a line it did not have, or a value at a named key
 * (present after, different before): the setting, as a protected path.
 */
export function protectedSetting(
  rel: string,
  before: string,
  after: string,
): ProtectedPath | undefined {
  const had = new Set(before.split("\n").map((l) => l.trim()));
  const lines = after.split("\n");
  for (const rule of settingRulesOf(rel)) {
    const added =
      "keys" in rule
        ? rule.keys.some((k) => {
            const now = jsonAt(after, k);
            return now !== undefined && now !== jsonAt(before, k);
          })
        : lines.some((l) => oneLine(rule.line).test(l) && !had.has(l.trim()));
    if (added) return { path: rel, why: rule.why };
  }
  return undefined;
}
