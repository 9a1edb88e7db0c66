/**
 * The stats page, pure: one self-contained HTML file (inline CSS and SVG, no script, no network)
 * with three charts — failure kinds per model, repairs per tool, outcomes over time — and the
 * tables. Every bar carries its series and value (`data-series`, `data-value`) and a tooltip.
 */
import { countsText, TOOL_COLUMNS, type Stats } from "./runs.js";

const PALETTE = [
  "#d1495b",
  "#edae49",
  "#00798c",
  "#30638e",
  "#66a182",
  "#8d6a9f",
  "#003d5b",
  "#e07a5f",
  "#8c8c8c",
];

/** Outcomes keep their meaning's colour. */
const OUTCOME_COLORS = {
  done: "#66a182",
  gave_up: "#edae49",
  needs_human: "#30638e",
  running: "#8c8c8c",
  stopped: "#d1495b",
  undone: "#8f5fa8",
};

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

interface Bar {
  label: string;
  parts: Record<string, number>;
}

/** Horizontal stacked bars, one per label, with a legend of the series. */
export function stackedBars(
  id: string,
  title: string,
  bars: readonly Bar[],
  colors: Record<string, string> = {},
): string {
  const series = [...new Set(bars.flatMap((b) => Object.keys(b.parts)))].sort();
  const max = Math.max(1, ...bars.map((b) => Object.values(b.parts).reduce((a, v) => a + v, 0)));
  const labelW = 180;
  const width = 720;
  const rowH = 26;
  const height = Math.max(1, bars.length) * rowH + 30;
  const color = (s: string) => colors[s] ?? PALETTE[series.indexOf(s) % PALETTE.length]!;
  const rows = bars.map((b, i) => {
    let x = labelW;
    const y = i * rowH + 4;
    const rects = series
      .filter((s) => (b.parts[s] ?? 0) > 0)
      .map((s) => {
        const v = b.parts[s]!;
        const w = ((width - labelW - 40) * v) / max;
        const rect = `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${color(s)}" data-series="${esc(s)}" data-value="${v}"><title>${esc(b.label)} · ${esc(s)}: ${v}</title></rect>`;
        x += w;
        return rect;
      });
    const total = Object.values(b.parts).reduce((a, v) => a + v, 0);
    return `<text x="${labelW - 8}" y="${y + rowH / 2}" text-anchor="end">${esc(b.label)}</text>${rects.join("")}<text x="${(x + 6).toFixed(1)}" y="${y + rowH / 2}" class="total">${total}</text>`;
  });
  const legend = series
    .map((s) => `<span><i style="background:${color(s)}"></i>${esc(s)}</span>`)
    .join("");
  const body = bars.length
    ? `<svg id="${id}" data-chart="${id}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(title)}">${rows.join("")}</svg><div class="legend">${legend}</div>`
    : `<p class="empty" data-chart="${id}">nothing to show</p>`;
  return `<section><h2>${esc(title)}</h2>${body}</section>`;
}

function table(head: readonly string[], rows: Array<Array<string | number>>): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${esc(String(c))}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

const fmt = (rec: Partial<Record<string, number>>) => countsText(rec, "—");

/** One bar per model: its calls' failures by kind. */
const failureBars = (stats: Stats): Bar[] =>
  stats.models.map((m) => ({
    label: m.model,
    parts: stats.tools
      .filter((t) => t.model === m.model)
      .reduce<Record<string, number>>((acc, t) => {
        for (const [k, v] of Object.entries(t.failures)) acc[k] = (acc[k] ?? 0) + v;
        return acc;
      }, {}),
  }));

/** One bar per tool that was repaired: its repairs by kind. */
function repairBars(stats: Stats): Bar[] {
  const toolNames = [...new Set(stats.tools.map((t) => t.tool))].sort();
  return toolNames
    .map((tool) => ({
      label: tool,
      parts: stats.tools
        .filter((t) => t.tool === tool)
        .reduce<Record<string, number>>((acc, t) => {
          for (const [k, v] of Object.entries(t.repairs)) acc[k] = (acc[k] ?? 0) + (v ?? 0);
          return acc;
        }, {}),
    }))
    .filter((b) => Object.keys(b.parts).length);
}

/** The table of models: runs, outcomes, calls, repairs, ladder rungs, tokens. */
const modelsTable = (stats: Stats) =>
  table(
    [
      "model",
      "runs",
      "outcomes",
      "calls",
      "failed",
      "repaired",
      "salvaged turns",
      "loops cut",
      "ladder rungs",
      "prompt tokens",
      "tok/s",
    ],
    stats.models.map((m) => [
      m.model,
      m.runs,
      fmt(m.outcomes),
      m.calls,
      m.failures,
      m.repaired,
      m.salvaged,
      m.loopsCut,
      fmt(m.rungs),
      m.promptTokens,
      m.tokensPerSecond?.toFixed(1) ?? "—",
    ]),
  );

/** The table of learned description lines and the misuse without and with each. */
const lessonsTable = (stats: Stats) =>
  stats.lessons?.length
    ? table(
        ["model", "tool", "status", "line", "misuse without", "misuse with"],
        stats.lessons.map((l) => [
          l.model,
          l.tool,
          l.status,
          l.line,
          `${l.before.misuses}/${l.before.calls}`,
          `${l.after.misuses}/${l.after.calls}`,
        ]),
      )
    : '<p class="empty">none yet</p>';

export function statsPage(stats: Stats, generated: string): string {
  const failures = failureBars(stats);
  const repairs = repairBars(stats);
  const outcomes = stats.days.map((d) => ({ label: d.day, parts: d.outcomes }));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>keel stats</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
svg text{font-size:12px;dominant-baseline:middle}svg .total{fill:#555}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
table{border-collapse:collapse;margin-top:8px}td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left;font-size:12px}
.empty{color:#888}
</style></head><body>
<h1>keel stats</h1>
<p>${stats.runs} runs in ${stats.threads} threads · ${stats.models.length} models · generated ${esc(generated)} · read from the checkpoints, nothing sent anywhere</p>
${stackedBars("failures", "Failure kinds per model", failures)}
${stackedBars("repairs", "Repairs per tool", repairs)}
${stackedBars("outcomes", "Outcomes over time", outcomes, OUTCOME_COLORS)}
<h2>Models</h2>
${modelsTable(stats)}
<h2>Tools</h2>
${table(
  TOOL_COLUMNS,
  stats.tools.map((t) => [t.model, t.tool, t.calls, fmt(t.failures), fmt(t.repairs)]),
)}
<h2>Learned description lines</h2>
${lessonsTable(stats)}
</body></html>
`;
}
