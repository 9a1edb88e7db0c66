import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../run/model.js";
import { ModelServerError } from "../../models/errors.js";
import { enumerateUnits } from "../enumerate.js";
import { AnalysisRecords, merkles } from "../records.js";
import { analystEnv } from "../runtime.js";
import type { AnalystStateUpdate } from "../state.js";

/**
 * Lists the units (no model call), decides whether a model is available, and stores the run's
 * manifest. A model that cannot be reached does not stop the analysis: it becomes a structural
 * report, and says so.
 */
export function createEnumerateNode(deps: GraphDeps) {
  return async (_state: unknown, config: LangGraphRunnableConfig): Promise<AnalystStateUpdate> => {
    const env = analystEnv(config, deps);
    const target = path.resolve(env.settings.target);
    if (!existsSync(target) || !statSync(target).isDirectory())
      throw new Error(`${target} is not a folder to analyse`);
    const records = new AnalysisRecords(env.store, target);
    const previous = await records.statIndex();
    const { index, hashed, ...found } = await enumerateUnits(target, {
      maxBytes: env.settings.maxFileBytes,
      ...(previous ? { previous } : {}),
    });

    let model: string | null = env.settings.model === "none" ? null : env.settings.model;
    let noModelReason = model ? undefined : "no model was requested (--model none)";
    if (model && deps.probe) {
      try {
        const profile = await deps.probe(env.settings.serverUrl, model, {
          retries: 1,
          baseMs: 200,
          url: env.settings.serverUrl,
          provider: env.settings.provider,
          ...(env.settings.apiKey ? { apiKey: env.settings.apiKey } : {}),
          model,
          signal: config.signal,
        });
        if (!profile.capabilities.includes("completion"))
          noModelReason = `model "${model}" cannot generate text`;
      } catch (err) {
        if (!(err instanceof ModelServerError)) throw err;
        noModelReason = err.message;
      }
      if (noModelReason) model = null;
    }
    // The records of file versions that are gone: what a changed or removed file was before.
    const gone = Object.entries(previous?.files ?? {}).flatMap(([p, e]) =>
      e.hash && index.files[p]?.hash !== e.hash ? [{ path: p, hash: e.hash }] : [],
    );
    if (gone.length) {
      await records.dropUnits(gone);
      await records.bumpEpoch();
    }
    await records.putStatIndex(index);
    await AnalysisRecords.putManifest(env.store, env.threadId, {
      ...found,
      id: randomUUID(),
      target,
      merkles: merkles(found.files, found.folders),
      model,
      ...(noModelReason ? { noModelReason } : {}),
    });
    return {
      target,
      modelMode: model ? "model" : "none",
      noModelReason,
      total: found.files.length,
      hashed,
      cursor: 0,
      folderTotal: found.folders.length,
      folderCursor: 0,
      analyzed: 0,
      reused: 0,
      failed: 0,
      foldersAnalyzed: 0,
      foldersReused: 0,
      largestRequest: 0,
      reportPath: undefined,
      jsonPath: undefined,
      summary: "",
    };
  };
}
