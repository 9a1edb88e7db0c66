/**
 * What a request asks to change on disk, read from what it asks for rather than from its grammar,
 * pure. "Which module exports the logger? Put the answer in notes.md" is a question, and it asks
 * for a file: a write instruction anywhere in the request — a clause that starts with a write verb
 * ("put", "save", "write … down", "append", "record") and names where it goes — is an effect the
 * run must produce. Read by the intent rules (such a request gets a toolset with write_file) and by
 * act (a run whose requested file was not written does not end `done`).
 *
 * Only imperative clauses count: "which module writes to app.log?" and "where do we save the
 * config to settings.json?" describe code, they ask for nothing. English, German, French, Spanish,
 * Portuguese and Italian, as the intent rules.
 */

export interface RequestedEffect {
  /** Workspace paths the request asks to be written, as it names them ("notes.md", "docs/a.md"). */
  paths: readonly string[];
  /** The request asks for something to be written to a file, named or not ("save it to a file"). */
  writes: boolean;
}

/** `\b` that knows letters beyond ASCII (as the intent rules). */
const B = String.raw`(?:(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}_])|(?<=[\p{L}\p{N}_])(?![\p{L}\p{N}_]))`;

/** Polite words that may open a clause. */
const POLITE = String.raw`(?:(?:please|pls|kindly|also|then|now|bitte|s'il te plaît|por favor|per favore)[,]?\s+)*`;
/** Where a sentence starts: the request's start, or after a sentence mark or a line break. */
const START = String.raw`(?:^|[.?!;:\n]\s*|\(\s*)${POLITE}`;
/** Where a joined clause starts: after a comma or a joining word ("… and write them to x.md"). */
const JOIN = String.raw`(?:,\s*|${B}(?:and|then|also|und|dann|et|puis|y|luego|e|depois|poi)\s+)${POLITE}`;

/** Imperative write verbs, base forms only (a third person "writes" describes code). */
const VERB = String.raw`(?:note\s+(?=down|it\b|them\b)|answer|reply|respond|put|write|save|store|record|dump|output|jot|append|add|place|export|copy|paste|keep|create|generate|produce|draft|speichere|schreibe|notiere|lege|füge|sauvegarde|enregistre|écris|mets|ajoute|guarda|escribe|pon|anota|añade|agrega|salve|grave|escreva|coloque|anote|adicione|salva|scrivi|metti|annota|aggiungi|antworte|réponds|responde|responda|rispondi)(?:\s+(?:down|out|up|ab))?`;

/**
 * What a joined clause writes: a pronoun or a result-like noun ("them", "the answer", "a short
 * summary"), so "explain how we load and save settings to config.json" asks for nothing.
 */
const OBJECT = String.raw`(?:it|them|this|that|these|those|everything|all of (?:it|them)|(?:the|your|a|an|my|our|its|their)\s+(?:[\w-]+\s+){0,2}(?:answers?|results?|list|findings|summary|output|names?|report|table|overview|notes?|explanation|counts?|numbers?|paths?|lines?|matches|todos?|conclusions?)|es|sie|das|(?:eine?n?|die|der|den|un|une|la|le|les|una|el|los|las|um|uma|a|o|os|as|il|i|gli)\s+(?:[\p{L}-]+\s+){0,2}(?:zusammenfassung|liste|antwort|ergebnisse?|résumé|réponse|résultats?|resumen|lista|respuesta|resultados?|resumo|resposta|riassunto|risposta|risultat[oi]))`;

/** A result-like noun alone, for wishes about where it goes ("the results should go to x.txt"). */
const RESULT = String.raw`(?:the|your|a|an|my)\s+(?:[\w-]+\s+){0,2}(?:answers?|results?|list|findings|summary|report|table|overview|notes?|explanation|counts?|numbers?|matches|conclusions?)`;

/** A file path: a name with an extension, or a path with a folder. */
const PATH = String.raw`((?:\.{0,2}/)?[\w@-][\w./@-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])`;

/** Prepositions that say where the text goes, with an optional article and "file". */
const INTO = String.raw`(?:in|into|to|as|under|at|inside|onto|nach|in die|in den|als|unter|dans|sous|vers|en|como|em|no|na|come|su|nel|nella)\s+(?:(?:the|a|an|die|la|le|el|il|o)\s+)?(?:(?:new\s+)?(?:file|datei|fichier|archivo|arquivo)\s+(?:(?:called|named)\s+)?)?["'\x60]?`;

/** "put the answer in notes.md" (sentence start: any object); "… and write them to out/list.txt". */
const WRITE_TO_PATH = [
  new RegExp(String.raw`${START}${VERB}${B}[^.?!;\n]{0,80}?${B}${INTO}${PATH}`, "giu"),
  new RegExp(String.raw`${JOIN}${VERB}\s+${OBJECT}${B}[^.?!;\n]{0,60}?${B}${INTO}${PATH}`, "giu"),
];
/**
 * Where a result goes said without a write verb: "Output: todos.txt", "I want the list in
 * endpoints.md", "the results should go to unused.txt", "give me a summary as summary.md".
 */
const RESULT_TO_PATH = [
  new RegExp(
    String.raw`${START}(?:output(?:\s+file)?|save (?:it )?to|write (?:it )?to|results? file|ausgabe|sortie|salida|saída)\s*:\s*["'\x60]?${PATH}`,
    "giu",
  ),
  new RegExp(
    String.raw`${START}(?:i|we)\s+(?:want|need|'d like|would like)\s+${RESULT}${B}[^.?!;\n]{0,40}?${B}${INTO}${PATH}`,
    "giu",
  ),
  new RegExp(
    String.raw`${START}${RESULT}\s+(?:should|must|needs? to|has to|have to)\s+(?:go|be\s+(?:written|saved|stored|put|placed))\s+${INTO}${PATH}`,
    "giu",
  ),
  new RegExp(
    String.raw`${START}give\s+(?:me|us)\s+[^.?!;\n]{0,60}?\s+as\s+["'\x60]?${PATH}`,
    "giu",
  ),
];
/** "create notes.md with …", "and update CHANGELOG.md": the verb names the file. */
const VERB_PATH = new RegExp(
  String.raw`(?:${START}|${JOIN})(?:append to|update|create|make|write|edit|fill in|schreibe|erstelle|crée|écris|crea|escribe|cria|escreva|scrivi)\s+(?:the\s+|a\s+)?(?:(?:new\s+)?file\s+(?:(?:called|named)\s+)?)?["'\x60]?${PATH}`,
  "giu",
);
/** "save it to a file", "write the list into a new file": an effect on disk without a name. */
const WRITE_TO_FILE = new RegExp(
  String.raw`(?:${START}${VERB}${B}[^.?!;\n]{0,80}?|${JOIN}${VERB}\s+${OBJECT}${B}[^.?!;\n]{0,60}?)${B}(?:in|into|to|as)\s+(?:a|an|the|one)\s+(?:new\s+)?(?:text\s+|markdown\s+|json\s+|csv\s+)?file${B}`,
  "iu",
);

/** Things that look like a file name and are not one. */
const NOT_A_FILE = /^(e\.g|i\.e|etc|vs|node\.js|next\.js|vue\.js|react\.js|asp\.net)$/i;

/** The last request read: a run reads its request when it starts and again when it ends. */
let last: { request: string; effect: Readonly<RequestedEffect> } | undefined;

/** What `request` asks to write (see the module comment). */
export function requestedEffect(request: string): Readonly<RequestedEffect> {
  if (last?.request === request) return last.effect;
  const effect = Object.freeze(readEffect(request.replace(/\r/g, "")));
  last = { request, effect };
  return effect;
}

function readEffect(text: string): RequestedEffect {
  const paths = new Set<string>();
  for (const re of [...WRITE_TO_PATH, ...RESULT_TO_PATH, VERB_PATH])
    for (const m of text.matchAll(re)) {
      const p = m[1]!.replace(/^\.\//, "").replace(/[.]+$/, "");
      if (!NOT_A_FILE.test(p)) paths.add(p);
    }
  return { paths: Object.freeze([...paths]), writes: paths.size > 0 || WRITE_TO_FILE.test(text) };
}

/**
 * The requested paths not among `written` (workspace-relative paths the run wrote). A path named
 * without a folder is met by a file of that name in any folder ("notes.md" by "docs/notes.md").
 */
export function unwritten(paths: readonly string[], written: readonly string[]): string[] {
  const norm = (p: string) => p.replace(/\\/g, "/").replace(/^\.\//, "").toLowerCase();
  const done = written.map(norm);
  return paths.filter((p) => {
    const want = norm(p);
    return !done.some((w) => w === want || (!want.includes("/") && w.endsWith(`/${want}`)));
  });
}
