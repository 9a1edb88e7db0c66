/** The analyst's routers: pure functions of the cursor. */
import type { AnalystStateValue } from "./state.js";

export const ANALYST_NODE = {
  enumerate: "enumerate",
  units: "analyze-units",
  folders: "summarize-folders",
  report: "write-report",
} as const;

/** More units to analyse → another batch; else the folders. */
export function routeAfterUnits(
  s: AnalystStateValue,
): typeof ANALYST_NODE.units | typeof ANALYST_NODE.folders {
  return s.cursor < s.total ? ANALYST_NODE.units : ANALYST_NODE.folders;
}

/** More folders → another batch; else the report. */
export function routeAfterFolders(
  s: AnalystStateValue,
): typeof ANALYST_NODE.folders | typeof ANALYST_NODE.report {
  return s.folderCursor < s.folderTotal ? ANALYST_NODE.folders : ANALYST_NODE.report;
}
