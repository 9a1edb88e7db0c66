/**
 * The intent rules: a fast, deterministic path that decides most requests without a model call.
 * The leading verb of the request decides (imperative mood), after polite openers are stripped;
 * questions are analysis or chat ("explain how to build X" is not a build, F3). English plus the
 * common verbs of German, French, Spanish, Portuguese and Italian. Unsure → confidence < 0.7, and
 * the model decides.
 */
import type { Intent } from "../../../tools/registry.js";

export interface RuleVerdict {
  intent: Intent;
  confidence: number;
}

/** "Please", "can you", "I want you to" … carry no intent. */
const OPENERS =
  /^((please|pls|kindly|hey|ok|okay|so|now|then|also|and)[,!]?\s+|(can|could|would|will) you( please)?\s+|i('d| would) like (you )?to\s+|i (want|need) you to\s+|help me( to)?\s+|let'?s\s+|we (need|have) to\s+|i (need|want) to\s+|bitte\s+|kannst du\s+|peux-tu\s+|pouvez-vous\s+|por favor,?\s+|puedes\s+|você pode\s+|puoi\s+)+/;

const VERBS: Array<[Intent, RegExp]> = [
  [
    "analyze",
    /^(deeply |thoroughly |carefully |quickly )?(analy[sz]e|analyse|review|audit|inspect|investigate|examine|explain|describe|summari[sz]e|understand|study|walk me through|tell me (about|how|what|why|where)|show me (how|what|where)|map out|trace|profile|assess|evaluate|compare|find out|look at|go through|analysiere|erkläre|erklär|untersuche|überprüfe|beschreibe|fasse|analyser|explique|expliquer|examine|décris|résume|analiza|analizar|explica|examina|describe|revisa|resume|analise|descreva|revise|analizza|spiega|esamina|descrivi)\b/,
  ],
  [
    "run",
    /^(run|execute|start|launch|serve|lint|compile|deploy|install dependencies|run the|führe|starte|lance|exécute|ejecuta|corre|lanza|rode|esegui|avvia)\b/,
  ],
  [
    "modify",
    /^(fix|refactor|rename|update|change|modify|edit|improve|optimi[sz]e|remove|delete|replace|migrate|upgrade|convert|port|patch|debug|clean up|cleanup|tidy|move|reorgani[sz]e|simplify|speed up|harden|correct|repair|rewrite|restructure|extract|split|merge|bump|behebe|korrigiere|ändere|refaktoriere|repariere|corrige|modifie|refactorise|répare|arregla|modifica|refactoriza|cambia|conserta|corrija|modifique|altere|correggi|sistema)\b/,
  ],
  [
    "build",
    /^(build|create|make|write|implement|generate|scaffold|set up|setup|develop|code|bootstrap|initiali[sz]e|produce|design and build|draft|add|erstelle|erstellen|baue|schreibe|implementiere|generiere|crée|créer|construis|écris|implémente|génère|ajoute|crea|crear|construye|escribe|implementa|genera|añade|cria|criar|construa|escreva|implemente|gere|costruisci|scrivi)\b/,
  ],
];

const QUESTION_WORD =
  /^(what|why|how|when|where|which|who|whose|is|are|was|were|can|could|does|do|did|should|would|will|has|have|wie|warum|wo|welche|qu'est|que|quoi|comment|pourquoi|quel|quelle|où|qué|cómo|por qué|dónde|cuál|o que|como|onde|cosa|come|perché|dove)\b/;
const ABOUT_CODE =
  /\b(code|codebase|repo|repository|functions?|methods?|class(es)?|modules?|files?|folders?|director(y|ies)|src|project|tests?|bugs?|errors?|stack trace|api|endpoints?|this|these|scripts?|config|dependenc(y|ies)|packages?|imports?|logger|types?|variables?)\b|[./\\][\w-]+|`[^`]+`/;
const GREETING =
  /^(hi|hello|hey|thanks|thank you|good (morning|evening)|hallo|bonjour|hola|olá|ciao)\b/;

/** Strips markdown heading markers, list bullets, quotes and a leading "Task:" label. */
function clean(line: string): string {
  return line
    .trim()
    .toLowerCase()
    .replace(/^[\s"'`*>#-]+/, "")
    .replace(/^(task|request|goal|todo|aufgabe|tâche|tarea)\s*:\s*/, "")
    .replace(OPENERS, "")
    .trim();
}

/** Decides the intent from the wording alone, or returns an unsure verdict (confidence < 0.7). */
export function classifyByRules(request: string): RuleVerdict {
  const lines = request.split(/\n/).map(clean).filter(Boolean);
  const text = lines.join("\n");
  for (const line of lines.slice(0, 3)) {
    if (GREETING.test(line) && line.length < 40) return { intent: "chat", confidence: 0.9 };
    const question = {
      intent: ABOUT_CODE.test(text) ? "analyze" : "chat",
      confidence: 0.75,
    } as const;
    if (QUESTION_WORD.test(line)) return question;
    for (const [intent, re] of VERBS) {
      if (!re.test(line)) continue;
      // "add docstrings to utils.py" changes an existing file; "add an endpoint" builds one.
      if (
        intent === "build" &&
        /^(add|ajoute|añade)\b/.test(line) &&
        /\b(to|in|into)\s+\S*[./]\S+/.test(line)
      ) {
        return { intent: "modify", confidence: 0.8 };
      }
      return { intent, confidence: 0.9 };
    }
    if (/\?\s*$/.test(line)) return question;
  }
  if (/^(i|we) (need|want|would like) (a|an|some|the|to have)\b/.test(lines[0] ?? ""))
    return { intent: "build", confidence: 0.75 };
  if (
    /\b(fails?|failing|broken|crash(es|ing)?|doesn'?t work|does not work|throws|exception|regression)\b/.test(
      text,
    )
  ) {
    return { intent: "modify", confidence: 0.7 };
  }
  // Keyword fallbacks for requests that do not start with a verb.
  if (/\b(build|create|implement|write|generate|scaffold)\b/.test(text))
    return { intent: "build", confidence: 0.6 };
  if (/\b(fix|bug|refactor)\b/.test(text)) return { intent: "modify", confidence: 0.6 };
  if (/\b(analy[sz]e|review|explain|overview)\b/.test(text))
    return { intent: "analyze", confidence: 0.6 };
  return { intent: "chat", confidence: 0.3 };
}
