/**
 * The analyst graph's state: a cursor and counts only. Findings live in the store, so a checkpoint
 * stays the same size however many units there are.
 */
import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";

export const AnalystState = new StateSchema({
  /** Absolute path of the analysed folder. Written by enumerate; read by every node. */
  target: z.string().default(""),
  /** Whether a model is used, and why not. Written by enumerate; read by the other nodes and the CLI. */
  modelMode: z.enum(["model", "none"]).default("none"),
  noModelReason: z.string().optional(),
  /** Files in the manifest, and how many are done. Written by enumerate / analyze-units; read by routeAfterUnits. */
  total: z.number().default(0),
  cursor: z.number().default(0),
  /** Files enumerate read and hashed (the others were known by size and times). Written by enumerate; read by the CLI and tests. */
  hashed: z.number().default(0),
  /** Folders to summarise, and how many are done. Written by enumerate / summarize-folders; read by routeAfterFolders. */
  folderTotal: z.number().default(0),
  folderCursor: z.number().default(0),
  /** Work counts of this run (model calls vs reuse). Written by the unit and folder nodes; read by the CLI. */
  analyzed: z.number().default(0),
  reused: z.number().default(0),
  failed: z.number().default(0),
  foldersAnalyzed: z.number().default(0),
  foldersReused: z.number().default(0),
  /** Largest request of this run, in estimated tokens. Written by the model-calling nodes; read by the CLI and bench. */
  largestRequest: z.number().default(0),
  /** Where the reports were written. Written by write-report; read by the CLI. */
  reportPath: z.string().optional(),
  jsonPath: z.string().optional(),
  /** One-line outcome. Written by write-report. */
  summary: z.string().default(""),
});

export type AnalystStateValue = typeof AnalystState.State;
export type AnalystStateUpdate = typeof AnalystState.Update;
