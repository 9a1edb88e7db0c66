import { stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { describeSource, languageOf, type FileStructure } from "./code-structure.js";
import { missingPath, notAFile, notRegular, readRegular, sandboxed } from "./fs-tools.js";
import { files as walk } from "./search-tools.js";
import { defineTool, ok } from "./types.js";

const MAX_FILE_BYTES = 512 * 1024;
const MAX_FOLDER_FILES = 400;

function fileSummary(s: FileStructure): string {
  const syms = s.symbols.map(
    (x) => `${x.exported ? "export " : ""}${x.kind} ${x.name} (line ${x.line})`,
  );
  return [
    `${s.path}: ${s.language}, ${s.lines} lines, ${s.bytes} bytes${s.parseErrors ? ", has syntax errors" : ""}`,
    s.imports.length ? `  imports: ${s.imports.join(", ")}` : "  imports: none",
    syms.length ? `  symbols: ${syms.join("; ")}` : "  symbols: none",
  ].join("\n");
}

export const analyzeCodeTool = defineTool({
  name: "analyze_code",
  description:
    "Structural summary of an existing source file or folder: language, size, imports and top-level symbols (parsed, not guessed).",
  toolClass: "explore",
  schema: z.object({
    path: z.string().describe("Existing file or folder, relative to the workspace"),
  }),
  async run({ path: p }, ctx) {
    const r = sandboxed(ctx.workspace, p);
    if ("failure" in r) return r.failure;
    const st = await stat(r.abs).catch(() => null);
    if (!st) return missingPath("analyze_code", r.rel);
    const what = notRegular(st);
    if (what) return notAFile("analyze_code", r.rel, what);
    if (st.isFile()) {
      if (st.size > MAX_FILE_BYTES)
        return ok(`${r.rel}: ${st.size} bytes, too large to parse; read parts with read_file.`);
      return ok(
        fileSummary(await describeSource(r.rel, (await readRegular(r.abs)).toString("utf8"))),
      );
    }
    const files = await walk(r.abs, "**/*", ctx.workspace);
    const byLanguage = new Map<string, { files: number; lines: number }>();
    const parts: string[] = [];
    for (const f of files.slice(0, MAX_FOLDER_FILES)) {
      const abs = path.join(r.abs, f);
      const rel = path.relative(ctx.workspace, abs).split(path.sep).join("/");
      const fst = await stat(abs);
      // a FIFO, socket or device is skipped: opening a FIFO would wait for a writer for ever
      if (!languageOf(f) || !fst.isFile() || fst.size > MAX_FILE_BYTES) continue;
      const bytes = await readRegular(abs).catch(() => null);
      if (!bytes) continue;
      const s = await describeSource(rel, bytes.toString("utf8"));
      const agg = byLanguage.get(s.language) ?? { files: 0, lines: 0 };
      byLanguage.set(s.language, { files: agg.files + 1, lines: agg.lines + s.lines });
      parts.push(fileSummary(s));
    }
    const header = [
      `${r.rel}/: ${files.length} files${files.length > MAX_FOLDER_FILES ? ` (first ${MAX_FOLDER_FILES} examined)` : ""}`,
      ...[...byLanguage].map(([lang, a]) => `  ${lang}: ${a.files} files, ${a.lines} lines`),
    ];
    return ok(clipLines([...header, "", ...parts].join("\n"), ctx.outputLimit));
  },
});

function clipLines(text: string, limit: number): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)}\n[truncated; analyze a subfolder or single file for more]`;
}
