/** What the model returns for a unit, a folder and the whole codebase; validated every time. */
import { z } from "zod";

export const UnitFinding = z.object({
  purpose: z.string().describe("One sentence: what this file is for"),
  keySymbols: z.array(z.string()).describe("The most important functions, classes or exports"),
  dependencies: z.array(z.string()).describe("What it depends on: modules, services, files"),
  risks: z.array(z.string()).describe("Bugs, risks, TODOs or smells worth a look; empty if none"),
  summary: z.string().describe("Two or three sentences on how it works"),
});
export type UnitFinding = z.infer<typeof UnitFinding>;

export const FolderSummary = z.object({
  purpose: z.string().describe("One sentence: what this folder is responsible for"),
  summary: z.string().describe("A short paragraph on how its parts fit together"),
});
export type FolderSummary = z.infer<typeof FolderSummary>;

export const ReportSynthesis = z.object({
  architecture: z
    .string()
    .describe("The architecture in a paragraph: layers, modules, how they depend on each other"),
  mainFlows: z.array(z.string()).describe("The main flows through the code, one line each"),
  hotspots: z.array(z.string()).describe("Where complexity or change concentrates, and why"),
  risks: z.array(z.string()).describe("The most important risks, one line each"),
  summary: z.string().describe("What this codebase is and does, in three sentences"),
});
export type ReportSynthesis = z.infer<typeof ReportSynthesis>;
