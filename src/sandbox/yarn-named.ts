/**
 * The workspace files a yarn config names as code every `yarn` command runs: `.yarnrc.yml`'s
 * `yarnPath` (the release yarn runs in place of itself) and `plugins` (each one's `path`, loaded at
 * start), and `.yarnrc`'s `yarn-path` (yarn 1). The config files are on the list (protected.ts);
 * what they name cannot be, so it is protected as the paths git config names are (git-named.ts): a
 * file tool's change asks a person, a command cannot change one that exists, and one a command
 * makes is removed after it (aftercare). Each is resolved from its config's folder, as yarn does.
 *
 * `yarnValues` is pure; `namedByYarnrc` resolves its values on the disk (links), and `yarnNamedOn`
 * reads the configs on a file's way (yarn reads every one from the folder it runs in upwards).
 */
import path from "node:path";
import { parse as parseYaml } from "yaml";
import type { ProtectedPath } from "./protected.js";
import { realTarget } from "./real-path.js";
import { readSmall } from "../files/door.js";

/** The config files yarn reads in every folder from where it runs upwards. */
export const YARNRCS = [".yarnrc.yml", ".yarnrc"] as const;

/** What a named path is to yarn, by the key naming it. */
const WHY = {
  yarnPath: "yarn runs it in place of itself in every yarn command",
  plugins: "yarn loads this plugin in every yarn command",
  "yarn-path": "yarn 1 runs it in place of itself in every yarn command",
} as const;

/**
 * The paths a yarn config's text names (`.yarnrc.yml` read as YAML, `.yarnrc` as yarn 1 reads its
 * `key value` lines), as written, each with its key. Text yarn could not read names nothing.
 */
export function yarnValues(
  name: string,
  text: string,
): Array<{ value: string; key: keyof typeof WHY }> {
  const out: Array<{ value: string; key: keyof typeof WHY }> = [];
  const add = (value: unknown, key: keyof typeof WHY) => {
    if (typeof value === "string" && value.trim() !== "") out.push({ value: value.trim(), key });
  };
  if (name.endsWith(".yml")) {
    let doc: unknown;
    try {
      doc = parseYaml(text.replace(/^\uFEFF/, ""));
    } catch {
      return out;
    }
    if (!doc || typeof doc !== "object") return out;
    const { yarnPath, plugins } = doc as Record<string, unknown>;
    add(yarnPath, "yarnPath");
    if (Array.isArray(plugins))
      for (const p of plugins)
        add(typeof p === "object" && p !== null ? (p as { path?: unknown }).path : p, "plugins");
    return out;
  }
  for (const m of text.matchAll(/^\s*(?:--)?["']?yarn-path["']?[\s=]+(.+?)\s*$/gm))
    add(m[1]!.replace(/^(["'])(.*)\1$/, "$2"), "yarn-path");
  return out;
}

/**
 * The workspace paths a yarn config (`rc`, workspace-relative) names: resolved from its folder, as
 * written and where links lead (the file tools act on the latter); none outside the workspace.
 */
export function namedByYarnrc(workspace: string, rc: string, text: string): ProtectedPath[] {
  const out = new Map<string, ProtectedPath>();
  const name = path.posix.basename(rc);
  for (const { value, key } of yarnValues(name, text)) {
    const abs = path.resolve(workspace, path.dirname(rc), value);
    for (const p of [abs, realTarget(abs)]) {
      const rel = p === undefined ? ".." : path.relative(workspace, p);
      if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
      const at = rel.split(path.sep).join("/");
      if (!out.has(at)) out.set(at, { path: at, why: `${WHY[key]} (${key} in ${rc})` });
    }
  }
  return [...out.values()];
}

/**
 * The paths the yarn configs on a workspace-relative file's way name (those in its folder and
 * every folder above it up to the workspace's top): read at each write, a config a person
 * approved since counts.
 */
export function yarnNamedOn(workspace: string, rel: string): ProtectedPath[] {
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  const out: ProtectedPath[] = [];
  for (let i = 0; i < parts.length; i++)
    for (const rc of YARNRCS) {
      const at = [...parts.slice(0, i), rc].join("/");
      const text = readSmall(path.join(workspace, at));
      if (text !== undefined) out.push(...namedByYarnrc(workspace, at, text));
    }
  return out;
}
