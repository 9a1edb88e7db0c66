/**
 * Protected settings inside files that are otherwise the project's own: the file tools' gate asks a
 * person for a line the change adds with one of them (`protectedSetting`), not for the file.
 */
import { sameName, type ProtectedPath } from "./protected.js";

/**
 * Settings in a project's shared config files that make a tool run code when an editor merely
 * opens the folder (it lints and type-checks on open): the files are the project's own and the
 * agent edits them, so only a line it adds or changes with one of these keys needs a person.
 */
export const PROTECTED_SETTINGS: ReadonlyArray<{ files: string[]; line: RegExp; why: string }> = [
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
];

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

/**
 * Whether writing `text` to a workspace-relative path adds a line `PROTECTED_SETTINGS` names that
 * `before` (the file as it is, "" when missing) does not have: the setting, as a protected path.
 */
export function protectedSetting(
  rel: string,
  before: string,
  text: string,
): ProtectedPath | undefined {
  const had = new Set(before.split("\n").map((l) => l.trim()));
  for (const rule of settingRulesOf(rel)) {
    const one = new RegExp(rule.line.source, "i");
    if (text.split("\n").some((l) => one.test(l) && !had.has(l.trim())))
      return { path: rel, why: rule.why };
  }
  return undefined;
}
