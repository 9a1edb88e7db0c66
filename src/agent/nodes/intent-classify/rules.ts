/**
 * The intent rules: a fast, deterministic path that decides most requests without a model call.
 * Looks at the leading verb of the request first (imperative mood decides), then at keywords.
 * "explain how to build X" is a question about building, not a build (F3).
 */
import type { Intent } from "../../../tools/registry.js";

export interface RuleVerdict {
  intent: Intent;
  confidence: number;
}

const LEAD: Array<[Intent, RegExp]> = [
  [
    "analyze",
    /^(deeply |thoroughly |please )*(analy[sz]e|review|audit|inspect|investigate|examine|explain|describe|summari[sz]e|document how|map out|study|understand|walk me through|tell me (about|how|what|why))\b/,
  ],
  ["run", /^(please )?(run|execute|start|launch|test|lint|compile|serve)\b/],
  [
    "modify",
    /^(please )?(fix|refactor|rename|update|change|modify|edit|improve|optimi[sz]e|remove|delete|replace|migrate|upgrade|convert|port|patch|debug|clean up|move)\b/,
  ],
  [
    "build",
    /^(please )?(build|create|make|write|implement|generate|scaffold|set up|setup|add|develop|design and build|code|bootstrap|initiali[sz]e|produce)\b/,
  ],
];

const QUESTION =
  /^(what|why|how|when|where|which|who|is|are|can|could|does|do|should|would|will)\b|\?\s*$/;

/** Decides the intent from the wording alone, or returns an unsure verdict (confidence < 0.7). */
export function classifyByRules(request: string): RuleVerdict {
  const text = request
    .trim()
    .toLowerCase()
    .replace(/^[\s"'`*>#-]+/, "");
  const firstLine = text.split(/\n/)[0] ?? "";
  for (const [intent, re] of LEAD) if (re.test(firstLine)) return { intent, confidence: 0.9 };
  if (QUESTION.test(firstLine)) {
    const aboutCode =
      /\b(code|codebase|repo|function|file|class|module|src|this project|folder)\b|[./\\]\w/.test(
        text,
      );
    return { intent: aboutCode ? "analyze" : "chat", confidence: 0.75 };
  }
  if (/^(hi|hello|hey|thanks|thank you)\b/.test(firstLine))
    return { intent: "chat", confidence: 0.9 };
  // Keyword fallbacks for requests that do not start with a verb ("I need a REST endpoint ...").
  if (/\b(build|create|implement|write|generate|scaffold)\b/.test(text))
    return { intent: "build", confidence: 0.6 };
  if (/\b(fix|bug|broken|failing|refactor)\b/.test(text))
    return { intent: "modify", confidence: 0.6 };
  if (/\b(analy[sz]e|review|explain|overview)\b/.test(text))
    return { intent: "analyze", confidence: 0.6 };
  return { intent: "chat", confidence: 0.3 };
}
