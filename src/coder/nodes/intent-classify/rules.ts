/**
 * The intent rules: a fast, deterministic path that decides most requests without a model call.
 * Two questions, answered separately from the wording:
 * - what the request asks to do (its act): create, change, examine, search, run, or answer — read
 *   from the leading verb after polite openers, or from the question form;
 * - what it is about (its topic): this workspace (paths, file names, "this project", "the tests",
 *   "where is … configured") or general knowledge ("closures in JavaScript", "how to build a REST
 *   API in Flask").
 * Examining or asking about the workspace is analysis; about general knowledge it is chat (F3:
 * "explain how to build X" is never a build). English, German, French, Spanish, Portuguese and
 * Italian. Unsure → confidence < 0.7, and the model decides.
 *
 * A request is read sentence by sentence and clause by clause ("find the bug in parse.py and fix
 * it", "why does the test fail? fix it"): the first sentence that asks something leads, and a
 * change asked after a read or a question is the work (when it is about this workspace; else
 * unsure). Context before the act ("In src/app.ts, …", "hi, …", a pasted code block, "1.") is
 * skipped. Where the wording cannot tell — writing a poem, "build it", a request with a verb the
 * rules do not know ("would you mind …?"), "summarize X in NOTES.md" — the verdict is unsure.
 */
import { changesThings, type Intent } from "../../../tools/registry.js";
import { requestedEffect } from "../../requested-effect.js";
import {
  OPENERS,
  MODAL,
  GERMAN_MODAL,
  CONTEXT,
  type Act,
  ACTS,
  READS_CODE,
  DOC_TARGET,
  PROSE,
  BUILD_EXISTING,
  QUESTION_WORD,
  WORKSPACE,
  GREETING,
  WANTS,
  WANTS_CHANGE,
  SYMPTOM,
  SAVES_AS_NEW,
  JOINED,
  HOW_TO,
  HAS_OBJECT,
  INSTEAD,
  VERB_ONLY,
} from "./words.js";

export interface RuleVerdict {
  intent: Intent;
  confidence: number;
}

/** Strips markdown heading markers, list bullets and numbers, quotes and a leading "Task:" label. */
function unmark(line: string): string {
  return line
    .trim()
    .toLowerCase()
    .replace(/^[\s"'`*>#¿¡-]+/, "")
    .replace(/^\d{1,2}[.)]\s+/, "")
    .replace(/^(tasks?|request|goal|todo|context|aufgabe|tâche|tarea|tarefa|compito)\s*:\s*/, "")
    .trim();
}

/** Also strips polite openers and a leading place ("In src/app.ts, …"): what is left starts with the act. */
function clean(line: string): string {
  return unmark(line).replace(OPENERS, "").replace(CONTEXT, "").replace(OPENERS, "").trim();
}

/** The act a line asks for, from its leading verb. */
function actOf(line: string): Act | undefined {
  return ACTS.find(([, re]) => re.test(line))?.[0];
}

interface Sentence {
  /** The sentence's clauses, cleaned; the first is the sentence's start. */
  clauses: string[];
  /** Opened as a request ("can you …"): a question mark does not make it a question. */
  modal: boolean;
  /** A leading place the clauses were stripped of ("in src/app.ts, "). */
  place: string;
  /** Opened by a German modal, so its verb may come last ("Kannst du ein Skript schreiben?"). */
  verbLast: boolean;
  question: boolean;
}

/** A request's first 12 sentences (fenced code dropped: it is material, not instructions). */
function sentencesOf(request: string): Sentence[] {
  return request
    .replace(/```[\s\S]*?(```|$)/g, "\n")
    .split(/\n/)
    .map(unmark)
    .filter(Boolean)
    .flatMap((line) => line.split(/(?<=[.?!;:])\s+/))
    .slice(0, 12)
    .map((raw) => {
      const head = clean(raw);
      // "do it", "is fine": two words without a question mark are not a question.
      const question =
        /\?\s*$/.test(head) || (QUESTION_WORD.test(head) && /\S\s+\S+\s+\S/.test(head));
      const clauses = question || HOW_TO.test(head) ? [head] : head.split(JOINED).map(clean);
      const place = CONTEXT.exec(unmark(raw).replace(OPENERS, ""))?.[0] ?? "";
      const opening = unmark(raw);
      return {
        clauses: clauses.filter(Boolean),
        modal: MODAL.test(opening),
        verbLast: GERMAN_MODAL.test(opening),
        place,
        question,
      };
    })
    .filter((s) => s.clauses.length > 0);
}

/** An act and where it was found. */
interface Found {
  act: Act;
  /** The clause that names the act. */
  clause: string;
  /** In a clause joined to another ("… and fix it"), not at a sentence's start. */
  joined: boolean;
  /** A joined act with an object of its own (see HAS_OBJECT). */
  strong: boolean;
  sentence: number;
}

const INTENT_OF: Record<Act, Intent> = {
  create: "build",
  change: "modify",
  run: "run",
  search: "analyze",
  examine: "analyze",
};
const changing = (act: Act) => act === "create" || act === "change" || act === "run";

/**
 * Decides the intent, or returns an unsure verdict (confidence < 0.7). What the request asks to
 * change comes first: a request that asks for a file to be written ("which module exports the
 * logger? put the answer in notes.md") is a build whatever its grammar, so its toolset has
 * write_file (requested-effect.ts); otherwise the wording decides.
 */
export function classifyByRules(request: string): RuleVerdict {
  const verdict = classifyByWording(request);
  if (!requestedEffect(request).writes) return verdict;
  // The effect is certain even where the wording is not ("Read x and write its first line to y").
  return changesThings(verdict.intent)
    ? { ...verdict, confidence: Math.max(verdict.confidence, 0.85) }
    : { intent: "build", confidence: 0.85 };
}

/**
 * Whether the request asks, in a sentence that is not a question (or is a polite request: "can you
 * run the tests?"), for something to be run: "run it", "… and run the tests", "install lodash".
 * A run that offered run_command and never ran one is not done (act/effect.ts).
 */
export function asksToRun(request: string): boolean {
  const sentences = sentencesOf(request);
  return actsOf(sentences).some(
    (f) =>
      f.act === "run" &&
      f.strong &&
      (!sentences[f.sentence]!.question || sentences[f.sentence]!.modal) &&
      // a label ("Install instructions:"), a habit to drop ("stop using var")
      !/:\s*$/.test(f.clause) &&
      !/^stop \p{L}+ing\b/u.test(f.clause),
  );
}

/** Decides the intent from the wording alone, or returns an unsure verdict (confidence < 0.7). */
function classifyByWording(request: string): RuleVerdict {
  const sentences = sentencesOf(request);
  const text = sentences.map((s) => s.clauses.join(" ")).join("\n");
  const workspace = WORKSPACE.test(request.toLowerCase()) || request.includes("```");
  const answer = (confidence: number): RuleVerdict => ({
    intent: workspace ? "analyze" : "chat",
    confidence,
  });
  const found = actsOf(sentences);
  const reads = found.some((f) => f.act === "search" || READS_CODE.test(f.clause));
  // The lead: the first sentence (of the first six) that asks something.
  const leadAt = sentences
    .slice(0, 6)
    .findIndex((s, i) => s.question || s.modal || found.some((f) => f.sentence === i));
  const lead = found.find((f) => f.sentence === leadAt);
  const then = found.find((f) => changing(f.act) && f.sentence >= leadAt && f !== lead);
  if (leadAt >= 0 && !lead) {
    // A question, then an instruction: "why does the test fail? fix it".
    // A fix presupposes something broken here; "what is a closure? write one" may not be about it.
    if (then) return followUp(then, workspace || then.act === "change", answer(0).intent);
    // "Would you mind writing …?", "Puoi fare …?": a request with a verb the rules do not know.
    if (sentences[leadAt]!.modal) return { ...fallback(request, text), confidence: 0.5 };
    return answer(QUESTION_WORD.test(sentences[leadAt]!.clauses[0]!) ? 0.75 : 0.6);
  }
  switch (lead?.act) {
    case "search":
    case "examine":
      // "find the bug and fix it", "explain what this regex does, then simplify it".
      if (then) return followUp(then, workspace || reads, answer(0).intent);
      // "summarize the architecture in ARCHITECTURE.md": what is in it, or what to write into it?
      if (DOC_TARGET.test(lead.clause)) return { intent: "analyze", confidence: 0.6 };
      return lead.act === "search" || (reads && !workspace)
        ? { intent: "analyze", confidence: 0.85 }
        : answer(workspace ? 0.9 : 0.8);
    case "run":
      // "run the tests and fix what fails": the fix is the work.
      if (then && then.act !== "run" && (!then.joined || then.strong))
        return { intent: "modify", confidence: 0.85 };
      return { intent: "run", confidence: 0.9 };
    case "change":
      return SAVES_AS_NEW.test(text)
        ? { intent: "build", confidence: 0.8 }
        : { intent: "modify", confidence: 0.9 };
    case "create":
      // "write a poem": an answer, unless a file is named for it (classifyByRules).
      if (PROSE.test(lead.clause)) return { intent: "chat", confidence: 0.5 };
      // "build the image and run it"; "build it" alone may mean the thing just discussed.
      if (BUILD_EXISTING.test(lead.clause))
        return { intent: "run", confidence: then?.act === "run" ? 0.85 : 0.6 };
      // "add docstrings to utils.py" changes an existing file; "add an endpoint" builds one.
      if (
        /^(add|ajoute|añade|agrega|füge|adicione|aggiungi)\b/.test(lead.clause) &&
        (/\b(to|in|into|zu|à|en|em|nel|nello|nella)\s+(.{0,40}\s)?\S*[./]\w\S*/.test(lead.clause) ||
          /[\w-]+\/|\w\.\w/.test(sentences[lead.sentence]!.place))
      )
        return { intent: "modify", confidence: 0.8 };
      return { intent: "build", confidence: 0.9 };
  }
  if (GREETING.test(unmark(request)) && request.trim().length < 60)
    return { intent: "chat", confidence: 0.9 };
  return fallback(request, text);
}

/** Every act a request's sentences name, in order. */
function actsOf(sentences: Sentence[]): Found[] {
  return sentences.flatMap((s, sentence) =>
    s.clauses.flatMap((clause, i) => {
      const last = s.verbLast && i === 0 ? /(\p{L}+)\P{L}*$/u.exec(clause.split(",")[0]!) : null;
      // "Read it from PORT instead": a replacement, whatever its verb.
      const act =
        actOf(clause) ??
        (last ? actOf(last[1]!) : undefined) ??
        (!s.question && INSTEAD.test(clause) ? "change" : undefined);
      const joined = i > 0;
      // "merge and rebase" coordinates nouns; "… and fix" asks for a fix.
      if (joined && !/\s/.test(clause.replace(/[.!]+$/, "")) && !VERB_ONLY.test(clause)) return [];
      return act
        ? [
            {
              act,
              clause,
              joined,
              strong: !joined || HAS_OBJECT.test(clause) || VERB_ONLY.test(clause),
              sentence,
            },
          ]
        : [];
    }),
  );
}

/**
 * A read first and a change after it ("find the bug in parse.py and fix it"): the change, when it
 * is about this workspace and has an object of its own; otherwise unsure ("explain closures, then
 * write an example"; "explain the import and export logic").
 */
function followUp(then: Found, sure: boolean, otherwise: Intent): RuleVerdict {
  if (sure && then.strong) return { intent: INTENT_OF[then.act], confidence: 0.85 };
  return { intent: then.joined ? otherwise : INTENT_OF[then.act], confidence: 0.6 };
}

/** A request without a leading act: what it wants, what it describes, or what it mentions. */
function fallback(request: string, text: string): RuleVerdict {
  const opening = unmark(request);
  if (WANTS.test(opening)) return { intent: "build", confidence: 0.75 };
  if (WANTS_CHANGE.test(opening)) return { intent: "modify", confidence: 0.75 };
  if (SYMPTOM.test(text)) return { intent: "modify", confidence: 0.7 };
  // "getUser should return null": a wish about the code, probably a change.
  if (/\b(should|must|needs? to|ought to)\b/.test(text))
    return { intent: "modify", confidence: 0.6 };
  // Keyword fallbacks for requests that do not start with a verb.
  if (/\b(build|create|implement|write|generate|scaffold)\b/.test(text))
    return { intent: "build", confidence: 0.6 };
  if (/\b(fix|bug|refactor)\b/.test(text)) return { intent: "modify", confidence: 0.6 };
  if (/\b(analy[sz]e|review|explain|overview)\b/.test(text))
    return { intent: "analyze", confidence: 0.6 };
  return { intent: "chat", confidence: 0.3 };
}
