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
 */
import { changesThings, type Intent } from "../../../tools/registry.js";
import { requestedEffect } from "../../requested-effect.js";

export interface RuleVerdict {
  intent: Intent;
  confidence: number;
}

/** "Please", "can you", "I want you to", "give me" … carry no intent. */
const OPENERS =
  /^((please|pls|kindly|hey|ok|okay|so|now|then|also|and|first)[,!]?\s+|(can|could|would|will) you( please)?\s+|i('d| would) like (you )?to\s+|i('d| would) like\s+|i (want|need) you to\s+|help me( to)?\s+|let'?s\s+|we (need|have) to\s+|i (need|want) to\s+|go ahead and\s+|bitte\s+|kannst du( bitte)?\s+|könntest du\s+|peux-tu\s+|pouvez-vous\s+|pourrais-tu\s+|s'il te plaît,?\s+|por favor,?\s+|puedes\s+|podrías\s+|você pode\s+|pode\s+|podes\s+|puoi\s+|potresti\s+|per favore,?\s+)+/;

type Act = "create" | "change" | "examine" | "search" | "run";

/** `\b` that knows letters beyond ASCII (so "crée", "écris", "führe" end and start words). */
const B = String.raw`(?:(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}_])|(?<=[\p{L}\p{N}_])(?![\p{L}\p{N}_]))`;
const words = (re: RegExp): RegExp =>
  new RegExp(re.source.replaceAll(String.raw`\b`, B), `${re.flags.replace("u", "")}u`);

/** Leading verbs per act, in the six languages. Order matters: the first that matches decides. */
const ACTS: Array<[Act, RegExp]> = [
  [
    "search",
    words(
      /^(find|search|locate|grep|list (all|every|the)|look for|check (whether|if)|detect|identify|count|finde|suche|durchsuche|liste alle|prüfe,? ob|trouve|cherche|recherche|liste (tous|toutes)|vérifie si|encuentra|busca|localiza|lista (todos|todas)|comprueba si|encontre|encontra|procure|procura|verifique se|verifica se|trova|cerca|elenca (tutti|tutte)|controlla se)\b/,
    ),
  ],
  [
    "examine",
    words(
      /^(deeply |thoroughly |carefully |quickly )?(analy[sz]e|analyse|review|audit|inspect|investigate|examine|explain|describe|summari[sz]e|understand|study|walk me through|tell me (about|how|what|why|where)|show me (how|what|where)|give me (an? )?([\w-]+ )?(overview|summary|rundown|tour|walkthrough|explanation)|(an? )?([\w-]+ )?(overview|summary|explanation|rundown|tour|walkthrough) (of|for)|map out|trace|profile|assess|evaluate|compare|find out|look at|go through|document how|analysiere|erkläre|erklär|untersuche|überprüfe|beschreibe|fasse|gib mir (einen|eine) (überblick|zusammenfassung)|(einen )?überblick über|analyser|analyse|explique|expliquer|examine|décris|résume|donne-moi (une|un) (vue d'ensemble|aperçu|résumé)|(une )?vue d'ensemble|analiza|analizar|explica|examina|describe|revisa|resume|dame (una|un) (visión general|resumen)|(una )?visión general|analise|analisa|descreva|revise|explique|dá-me (uma|um) (visão geral|resumo)|me dê (uma|um) (visão geral|resumo)|(uma )?visão geral|analizza|spiega|esamina|descrivi|riassumi|dammi (una|un) (panoramica|riassunto)|(una )?panoramica)\b/,
    ),
  ],
  [
    "run",
    words(
      /^(run|execute|start|launch|serve|lint|compile|deploy|install|reinstall|test the|build and run|run the|führe|starte|installiere|lance|exécute|démarre|installe|ejecuta|corre|lanza|arranca|instala|rode|roda|execute|inicie|instale|esegui|avvia|lancia|installa)\b/,
    ),
  ],
  [
    "change",
    words(
      /^(fix|refactor|rename|update|change|modify|edit|improve|optimi[sz]e|remove|delete|replace|migrate|upgrade|convert|export|turn|transform|port|patch|debug|clean up|cleanup|tidy|move|reorgani[sz]e|simplify|speed up|harden|correct|repair|rewrite|restructure|extract|split|merge|bump|translate|behebe|korrigiere|ändere|refaktoriere|repariere|konvertiere|wandle|exportiere|entferne|corrige|modifie|refactorise|répare|convertis|transforme|exporte|supprime|arregla|modifica|refactoriza|cambia|convierte|transforma|exporta|elimina|conserta|corrija|modifique|altere|converta|remova|correggi|sistema|converti|trasforma|esporta|rimuovi)\b/,
    ),
  ],
  [
    "create",
    words(
      /^(build|create|make|write|implement|generate|scaffold|set up|setup|develop|code|bootstrap|initiali[sz]e|produce|design and build|draft|add|erstelle|erstellen|baue|schreibe|implementiere|generiere|füge|crée|créer|construis|écris|implémente|génère|ajoute|crea|crear|construye|escribe|implementa|genera|añade|agrega|cria|criar|construa|escreva|implemente|gere|adicione|costruisci|scrivi|aggiungi)\b/,
    ),
  ],
];

const QUESTION_WORD = words(
  /^(what|why|how|when|where|which|who|whose|is|are|was|were|can|could|does|do|did|should|would|will|has|have|wie|warum|wo|wann|welche[rsmn]?|was|gibt es|qu'est|que|quoi|comment|pourquoi|quel(le)?s?|où|est-ce|qué|cómo|por qué|dónde|cuál(es)?|cuándo|hay|o que|como|onde|qual|quais|quando|por que|cosa|come|perché|dove|quale|quali|quando|c'è)\b/,
);

/**
 * A reference to this workspace: a path or file name, code in backticks, "this/our/my <thing>", or
 * "the <code thing>" (the tests, the config: a particular one, here), in the six languages.
 */
const CODE_NOUNS =
  "code|codebase|repo|repository|project|app|application|tests?|test suite|config(uration)?|settings|build|ci|pipeline|server|client|frontend|backend|database|schema|migrations?|modules?|packages?|functions?|class(es)?|methods?|files?|folders?|director(y|ies)|architecture|structure|dependenc(y|ies)|logger|logging|routes?|endpoints?|handlers?|components?|models?|entry ?point|readme|makefile|dockerfile|docs|source|src|scripts?|workflow|bug|error|crash|login|auth(entication)?|api|data flow|logic|middleware|services?|controllers?|views?|templates?|quer(y|ies)|tables?|store|state|cache|hooks?|plugins?|cli|commands?|requests?|responses?|types?|interfaces?|utils|helpers?|lib|library|parser|queue|jobs?|workers?";
const FOREIGN_NOUNS =
  "code|código|codice|projekt|projet|proyecto|projeto|progetto|modul|module|módulo|modulo|tests?|konfiguration|configuration|configuración|configuração|configurazione|datenbank|base de données|base de datos|banco de dados|database|architektur|architecture|arquitectura|arquitetura|architettura|abhängigkeiten|dépendances|dependencias|dependências|dipendenze|funktion|fonction|función|função|funzione|datei|fichier|archivo|arquivo|repository|repo|dépôt|repositorio|repositório|server|serveur|servidor";
/** Verbs that place something in a codebase: "where is the database configured?" */
const PLACED =
  "configured|defined|declared|implemented|set|loaded|called|used|handled?|stored|validated?|checked|parsed?|sent|send|read|written|computed|compute|logged|log|initiali[sz]ed|registered|imported|created|written|tested|located|done|happening|konfiguriert|definiert|implementiert|gesetzt|geladen|aufgerufen|configuré|configurée|défini|définie|implémenté|chargé|appelé|configura|define|implementa|carga|llama|configurado|configurada|definido|definida|implementado|carregado|chamado|configurato|configurata|definito|definita|implementato|caricato|chiamato";

/**
 * A reference to this workspace: a path or file name, code in backticks, "this/our/my <thing>",
 * "the <code thing>" (the tests, the config: a particular one, here), "which files…", "where is …
 * configured", in the six languages.
 */
const WORKSPACE = words(
  new RegExp(
    [
      String.raw`(^|\s)(\.{0,2}[\\/]|[\w-]+[\\/])[\w./\\-]*`,
      String.raw`\b[\w-]+\.(ts|tsx|js|jsx|mjs|cjs|py|go|rs|java|kt|rb|php|cs|cpp|c|h|hpp|swift|json|ya?ml|toml|md|txt|csv|sql|sh|html|css|xml|ini|cfg|env|lock)\b`,
      "`[^`]+`",
      String.raw`\b(this|these|our|my|here)\b`,
      String.raw`\bthe\s+([\w-]+\s+){0,2}(${CODE_NOUNS})\b`,
      String.raw`\b(which|what) (files?|functions?|modules?|classes|tests?|folders?)\b`,
      String.raw`\b(where|wo|où|dónde|donde|onde|dove)\b.{0,60}\b(${PLACED})\b`,
      String.raw`\bwhere (do|does|did) (we|you|i|it|the code)\b`,
      String.raw`\b(dies(e[rsmn]?)?|unser(e[rsmn]?)?|hier|cet|cette|ces|notre|nos|ici|este|esta|estos|estas|nuestro|nuestra|aquí|esse|essa|nosso|nossa|aqui|questo|questa|questi|queste|nostro|nostra)\b`,
      String.raw`(?<![-'])\bce\b`,
      String.raw`\b(mein(e[rsmn]?)?|mon|ma|mes|mi|mis|meu|minha|mio|mia)\s+(${FOREIGN_NOUNS})\b`,
      String.raw`\b(das|der|die|den|dem|le|la|les|l'|el|los|las|il|lo|gli|do|da|no|na|del|dello|della)\s*(${FOREIGN_NOUNS})\b`,
    ].join("|"),
    "u",
  ),
);

const GREETING = words(
  /^(hi|hello|hey|thanks|thank you|good (morning|evening)|hallo|danke|bonjour|merci|hola|gracias|olá|obrigad[oa]|ciao|grazie)\b/,
);

/** "… and save it as out.json", "… into a new file": a change whose result is a new file is a build. */
const SAVES_AS_NEW = words(
  new RegExp(
    [
      String.raw`\b(save|write|store|output|export|put|speichere|schreibe|sauvegarde|enregistre|écris|guarda|guárdalo|escribe|salve|grave|escreva|salva|salvalo|scrivi|scrivilo)\b.{0,40}\b(as|to|into|in|als|nach|sous|dans|en|como|em|come|su)\b\s+\S*\.[a-z]{1,5}\b`,
      String.raw`\b(called|named|genannt|namens|appelé|nommé|llamado|chamado|chiamato)\s+\S*\.[a-z]{1,5}\b`,
      String.raw`^(export|exportiere|exporte|exporta|esporta)\b.{0,60}\b(to|into|as|nach|in|als|vers|en|a|para|in)\s+\S*\.[a-z]{1,5}\b`,
      String.raw`\binto a new file\b`,
    ].join("|"),
    "u",
  ),
);

/** Strips markdown heading markers, list bullets, quotes and a leading "Task:" label. */
function clean(line: string): string {
  return line
    .trim()
    .toLowerCase()
    .replace(/^[\s"'`*>#¿¡-]+/, "")
    .replace(/^(task|request|goal|todo|aufgabe|tâche|tarea|tarefa|compito)\s*:\s*/, "")
    .replace(OPENERS, "")
    .trim();
}

/** The act a line asks for, from its leading verb. */
function actOf(line: string): Act | undefined {
  return ACTS.find(([, re]) => re.test(line))?.[0];
}

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

/** Decides the intent from the wording alone, or returns an unsure verdict (confidence < 0.7). */
function classifyByWording(request: string): RuleVerdict {
  const lines = request.split(/\n/).map(clean).filter(Boolean);
  const text = lines.join("\n");
  const workspace = WORKSPACE.test(text);
  const answer = (confidence: number): RuleVerdict => ({
    intent: workspace ? "analyze" : "chat",
    confidence,
  });
  for (const line of lines.slice(0, 3)) {
    if (GREETING.test(line) && line.length < 40) return { intent: "chat", confidence: 0.9 };
    const act = actOf(line);
    switch (act) {
      case "search":
        return { intent: "analyze", confidence: 0.85 };
      case "examine":
        return answer(workspace ? 0.9 : 0.8);
      case "run":
        return { intent: "run", confidence: 0.9 };
      case "change":
        return SAVES_AS_NEW.test(text)
          ? { intent: "build", confidence: 0.8 }
          : { intent: "modify", confidence: 0.9 };
      case "create":
        // "add docstrings to utils.py" changes an existing file; "add an endpoint" builds one.
        if (
          /^(add|ajoute|añade|agrega|füge|adicione|aggiungi)\b/.test(line) &&
          /\b(to|in|into|zu|à|en|em|nel|nello|nella)\s+\S*[./]\S+/.test(line)
        )
          return { intent: "modify", confidence: 0.8 };
        return { intent: "build", confidence: 0.9 };
    }
    if (QUESTION_WORD.test(line) || /\?\s*$/.test(line)) return answer(0.75);
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
