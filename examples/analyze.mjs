// Analyse a folder and print where the report went and the hotspots. With no reachable model (or
// KEEL_MODEL=none) the report is structural and says so.
//   OLLAMA_HOST=http://127.0.0.1:11434 node examples/analyze.mjs [folder]
import { runAnalysis } from "keel-agent";

const folder = process.argv[2] ?? ".";
const result = await runAnalysis(folder, {
  model: process.env.KEEL_MODEL ?? "qwen3:8b",
  concurrency: 2,
});
console.log(
  result.modelMode === "model"
    ? "analysed with the model"
    : `no model used: ${result.noModelReason}`,
);
console.log(`units: ${result.total}, folders: ${result.folderTotal}`);
console.log(
  `most imported: ${result.report.hotspots.mostImported.map((h) => h.path).join(", ") || "none"}`,
);
console.log(`report: ${result.reportPath}`);
