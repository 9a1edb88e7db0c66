/** Terminal tables (columns padded to their widest cell, the header in bold) and counted words. */
import pc from "picocolors";

/** The header line (bold) and the rows, each column as wide as its widest cell. */
export function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [pc.bold(line(head)), ...rows.map(line)];
}

/** "1 turn", "2 turns": a count with its word. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
