/** What one fake Ollama holds between requests, and how it finds a model by the name a request gives. */
import type { ServerResponse } from "node:http";
import { KvCache, MACHINES, type MachineProfile, type PrefillRecord } from "./prefill.js";
import { Residency } from "./residency.js";
import type {
  ChatBody,
  ChatView,
  FakeModel,
  FakeOllamaOptions,
  RecordedRequest,
  Reply,
  Script,
} from "./types.js";

export const DEFAULT_FAKE_MODELS: Record<string, FakeModel> = {
  "qwen3:8b": {
    capabilities: ["completion", "tools", "thinking"],
    family: "qwen3",
    contextLength: 40960,
  },
  "llama3.1:8b": { capabilities: ["completion", "tools"], family: "llama", contextLength: 131072 },
  "gemma3:4b": { capabilities: ["completion", "vision"], family: "gemma3", contextLength: 131072 },
  "nomic-embed-text": { capabilities: ["embedding"], family: "nomic-bert", contextLength: 2048 },
};

/** The digest `/api/tags` and `/api/ps` give a model that names none. */
export const DIGEST = "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72";

/** A model name with its tag, as Ollama lists it (`:latest` when it has none). */
export function withTag(name: string): string {
  return name.includes(":") ? name : `${name}:latest`;
}

/** The model a request names, with or without its `:latest` tag. */
export function lookupModel(
  models: Record<string, FakeModel>,
  name: string,
): FakeModel | undefined {
  return (
    models[name] ??
    models[withTag(name)] ??
    (name.endsWith(":latest") ? models[name.slice(0, -7)] : undefined)
  );
}

/** One request's prefill account, as the KV cache opens it. */
export type PrefillAccount = NonNullable<ReturnType<KvCache["prefill"]>>;

/** The fake's settings and everything it keeps from one request to the next. */
export interface FakeOllamaState {
  opts: FakeOllamaOptions;
  models: Record<string, FakeModel>;
  script: Script;
  /** Injected replies, answered before the script is asked again. */
  queue: Reply[];
  requests: RecordedRequest[];
  violations: string[];
  /** Responses left hanging, closed with the server. */
  hanging: Set<ServerResponse>;
  chatHook: ((req: ChatView, index: number) => void) | undefined;
  chatCount: number;
  machine: MachineProfile;
  prefill: PrefillRecord[];
  cache: KvCache;
  residency: Residency;
}

/** A fresh fake's state from its options. */
export function stateOf(opts: FakeOllamaOptions): FakeOllamaState {
  const models = opts.models ?? DEFAULT_FAKE_MODELS;
  const machine = opts.machine ?? MACHINES.gpu;
  const cache = new KvCache(
    machine,
    (name) => {
      const m = lookupModel(models, name);
      return m?.charsPerToken ?? m?.density;
    },
    opts.defaultContext,
  );
  return {
    opts,
    models,
    script: opts.script ?? (() => ({ content: "Hello from the scripted fake model." })),
    queue: [],
    requests: [],
    violations: [],
    hanging: new Set<ServerResponse>(),
    chatHook: undefined,
    chatCount: 0,
    machine,
    prefill: [],
    cache,
    residency: new Residency(opts.keepAliveMs ?? 300_000),
  };
}

/** Opens a request's prefill account, loading the model first (an unloaded one empties the cache). */
export function prefillFor(
  fake: FakeOllamaState,
  model: string,
  body: ChatBody,
  contextLength: number,
): PrefillAccount | undefined {
  fake.residency.loaded(withTag(model), () => fake.cache.unload());
  return fake.cache.prefill(model, body, contextLength);
}

/** The account's `finish`, keeping each completed record in the fake's `prefill` list. */
export function recordedFinish(
  fake: FakeOllamaState,
  account: PrefillAccount,
): PrefillAccount["finish"] {
  return (r, generated) => {
    const record = account.finish(r, generated);
    fake.prefill.push(record);
    return record;
  };
}
