/**
 * The intent rules' vocabulary: openers, leading verbs per act, topic and question words, in
 * English, German, French, Spanish, Portuguese and Italian. Pure data (regular expressions); how
 * they are read is rules.ts.
 */
/** "Please", "can you", "I want you to", "give me" … carry no intent. */
export const OPENERS =
  /^((please|pls|plz|plse|kindly|hey|hi|hello|yo|good (morning|afternoon|evening)|ok|okay|so|now|then|also|and|first|next|finally)( there)?[,!]?\s+|(can|could|would|will) (you|u)( please| pls| plz)?\s+|would you mind\s+|i('d| would) like (you )?to\s+|i('d| would) like\s+|i (want|need) you to\s+|help me( to)?\s+|let'?s\s+|we (need|have) to\s+|i (need|want) to\s+|go ahead and\s+|bitte\s+|kannst du( bitte)?\s+|könntest du\s+|peux-tu\s+|pouvez-vous\s+|pourrais-tu\s+|s'il te plaît,?\s+|por favor,?\s+|puedes\s+|podrías\s+|você pode\s+|pode\s+|podes\s+|puoi\s+|potresti\s+|per favore,?\s+)+/;

/**
 * Openers that make a question a request ("can you …?", "kannst du …?"): such a sentence with no
 * verb the rules know is an unknown request, not a question to answer.
 */
export const MODAL =
  /^((please|pls|plz|hey|ok|okay|so|now|also)[,!]?\s+)*((can|could|would|will) (you|u)|would you mind|kannst du|könntest du|würdest du|können sie|könnten sie|peux-tu|pouvez-vous|pourrais-tu|pourriez-vous|puedes|podrías|podría|puede|você pode|pode|podes|poderia|puoi|potresti|può|potrebbe)(?![\p{L}])/u;
/** German puts the verb last after a modal: "Kannst du ein Skript schreiben?". */
export const GERMAN_MODAL =
  /^(kannst du|könntest du|würdest du|können sie|könnten sie)(?![\p{L}])/u;

/** A leading place or topic before the request proper: "In src/app.ts, rename foo to bar". */
export const CONTEXT =
  /^(in|inside|within|for|on|im|in der|in dem|für|dans|pour|sur|en|para|em|no|na|nel|nella|nello|per|su)\s+[^,;]{1,60},\s*/u;

export type Act = "create" | "change" | "examine" | "search" | "run";

/** `\b` that knows letters beyond ASCII (so "crée", "écris", "führe" end and start words). */
const B = String.raw`(?:(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}_])|(?<=[\p{L}\p{N}_])(?![\p{L}\p{N}_]))`;
const words = (re: RegExp): RegExp =>
  new RegExp(re.source.replaceAll(String.raw`\b`, B), `${re.flags.replace("u", "")}u`);

/** A pasted shell command on its own: "npm test", "pip install requests" (not "npm test fails"). */
const COMMAND = String.raw`(npm|npx|yarn|pnpm|bun|pip3?|pipx|uv|poetry|pytest|tox|cargo|dotnet|mvn|gradle|composer|bundle|rake|docker|docker-compose|kubectl|terraform|go (build|test|run|mod|get|vet|generate|install|fmt)|(python3?|node|deno|bash|sh) (-\S+|\S+\.\w+))\s+(?!.*\b(fails?|failing|broken|errors?|crash\w*|throws|doesn'?t|does not|won'?t|not working)\b)(?=\S)`;
/** Git and branch operations: run, not build ("create a branch called x"). */
const GIT = String.raw`git|commit|push|pull|rebase|stash|cherry-pick|checkout|check out|(create|make|delete|switch to|open) (a |the |new |local |remote |git )*(branch|tag)`;

/** Leading verbs per act, in the six languages (imperatives, and the infinitives a modal takes). Order matters: the first that matches decides. */
export const ACTS: Array<[Act, RegExp]> = [
  [
    "search",
    words(
      /^(find|search|locate|grep|list (all|every|the)|look for|check (whether|if)|detect|identify|count|finde|suche|durchsuche|liste alle|prüfe,? ob|trouve|cherche|recherche|liste (tous|toutes)|vérifie si|encuentra|busca|localiza|lista (todos|todas)|comprueba si|encontre|encontra|procure|procura|verifique se|verifica se|trova|cerca|elenca (tutti|tutte)|controlla se|finden|suchen|trouver|chercher|encontrar|buscar|procurar|trovare|cercare)\b/,
    ),
  ],
  [
    "examine",
    words(
      /^(deeply |thoroughly |carefully |quickly )?(analy[sz]e|analyse|review|audit|inspect|investigate|examine|explain|describe|summari[sz]e|understand|study|walk me through|tell me|show me|show (all|every|where|how|what|which)|give me (an? )?([\w-]+ )?(overview|summary|rundown|tour|walkthrough|explanation)|(an? )?([\w-]+ )?(overview|summary|explanation|rundown|tour|walkthrough) (of|for)|map out|trace|profile|assess|evaluate|compare|find out|look at|go through|document how|analysiere|erkläre|erklär|untersuche|überprüfe|beschreibe|fasse|gib mir (einen|eine) (überblick|zusammenfassung)|(einen )?überblick über|analyser|analyse|explique|expliquer|examine|décris|résume|donne-moi (une|un) (vue d'ensemble|aperçu|résumé)|(une )?vue d'ensemble|analiza|analizar|explica|explicar|examina|describe|revisa|resume|dame (una|un) (visión general|resumen)|(una )?visión general|analise|analisa|analisar|descreva|revise|explique|dá-me (uma|um) (visão geral|resumo)|me dê (uma|um) (visão geral|resumo)|(uma )?visão geral|analizza|analizzare|spiega|spiegare|esamina|descrivi|riassumi|dammi (una|un) (panoramica|riassunto)|(una )?panoramica|analysieren|erklären)\b/,
    ),
  ],
  [
    "run",
    words(
      new RegExp(
        String.raw`^(run|rerun|re-run|execute|start(?! (with|by|from|over)\b)|restart|stop|launch|serve|lint|compile|deploy|install|reinstall|test the|build and run|run the|${GIT}|${COMMAND}|make (test|check|build|install|all|lint|clean|dev|run)\s*$|führe|starte|installiere|lance|exécute|démarre|installe|ejecuta|corre|lanza|arranca|instala|rode|roda|execute|inicie|instale|esegui|avvia|lancia|installa|ausführen|starten|installieren|exécuter|lancer|installer|ejecutar|correr|instalar|executar|rodar|eseguire|avviare|installare)\b`,
      ),
    ),
  ],
  [
    "change",
    words(
      /^(fix|refactor|rename|update|change|modify|edit|improve|optimi[sz]e|remove|delete|replace|migrate|upgrade|downgrade|convert|export|turn|transform|port|patch|debug|clean up|cleanup|tidy|move|reorgani[sz]e|simplify|speed up|harden|correct|repair|rewrite|restructure|extract|split|merge|bump|translate|use|switch|get rid of|drop|set(?! up)|increase|decrease|reduce|raise|lower|enable|disable|handle|sort|format|reformat|revert|undo|resolve|solve|adjust|tweak|address|apply|document|annotate|comment out|uncomment|wrap|inline|deduplicate|dedupe|rework|make (it|them|this|that|these|those|sure|the|our|my|all|every|each|everything)|behebe|korrigiere|ändere|refaktoriere|repariere|konvertiere|wandle|exportiere|entferne|benenne|ersetze|lösche|aktualisiere|optimiere|verbessere|mach(e)? (es|das|die|den|der|dem|alle)|beheben|korrigieren|ändern|umbenennen|ersetzen|löschen|entfernen|corrige|modifie|refactorise|répare|convertis|transforme|exporte|supprime|renomme|remplace|rends|mets à jour|corriger|modifier|changer|renommer|remplacer|supprimer|réparer|rendre|arregla|modifica|refactoriza|cambia|convierte|transforma|exporta|elimina|renombra|reemplaza|borra|actualiza|optimiza|mejora|haz que|arreglar|corregir|cambiar|modificar|renombrar|reemplazar|eliminar|actualizar|conserta|corrija|modifique|altere|converta|remova|renomeie|substitua|mude|atualize|otimize|melhore|faça com que|corrigir|consertar|mudar|alterar|renomear|substituir|remover|atualizar|correggi|sistema|converti|trasforma|esporta|rimuovi|rinomina|sostituisci|aggiorna|ottimizza|migliora|rendi|correggere|sistemare|cambiare|modificare|rinominare|sostituire|rimuovere|aggiornare|(arr[eé]gla|corr[ií]ge|c[aá]mbia|elim[ií]na|actual[ií]za|corr[ií]ja|conserte|mude|correggi|sistema|cambia|rimuovi|aggiorna)(lo|la|los|las|li|le|o|a))\b/,
    ),
  ],
  [
    "create",
    words(
      /^(build|create|make|write|implement|generate|scaffold|set up|setup|develop|code|bootstrap|initiali[sz]e|produce|design and build|draft|compose|add|erstelle|erstellen|baue|schreibe|implementiere|generiere|füge|schreiben|bauen|implementieren|hinzufügen|crée|créer|construis|écris|implémente|génère|ajoute|écrire|construire|ajouter|implémenter|générer|crea|crear|construye|escribe|implementa|genera|añade|agrega|escribir|construir|añadir|agregar|implementar|generar|cria|criar|construa|escreva|implemente|gere|adicione|escrever|adicionar|gerar|costruisci|scrivi|aggiungi|creare|scrivere|costruire|aggiungere|implementare|generare|(escr[ií]be|cr[eé]a|a[nñ][aá]de|scrivi|crea|aggiungi)(lo|la|los|las|li|le))\b/,
    ),
  ],
];

/** Examining verbs whose object is code at hand ("investigate the memory leak"), unlike "explain". */
export const READS_CODE = words(
  /^(deeply |thoroughly |carefully |quickly )?(analy[sz]e|analyse|review|audit|inspect|investigate|trace|profile|look at|go through|map out|analysiere|untersuche|überprüfe|analyser|analiza|revisa|analise|revise|analizza|esamina)\b/,
);

/** A summary "in" a document: of it, or into it — the wording cannot tell. */
export const DOC_TARGET =
  /^(summari[sz]e|describe|outline|explain|document)\b.*\b(in|into)\s+\S+\.(md|txt|rst|adoc)\s*[.!]?$/;

/**
 * Writing that is not software ("write a poem about autumn", "draft a cover letter"): an answer
 * in the chat unless the request names a file for it (requested-effect.ts).
 */
export const PROSE = words(
  /^(write|draft|compose|create|make|give|tell|schreibe|écris|escribe|escreva|scrivi)( me| us| mir| moi| me)?\s+((a|an|some|the|ein|eine|einen|un|une|una|uno|um|uma)\s+)?([\w-]+\s+){0,2}(poems?|haikus?|limericks?|sonnets?|songs?|lyrics|stor(y|ies)|jokes?|essays?|e-?mails?|letters?|tweets?|speech|toast|riddles?|gedicht|geschichte|witz|brief|aufsatz|poème|histoire|blague|lettre|courriel|poema|historia|chiste|carta|ensayo|correo|poesia|storia|barzelletta|lettera|saggio|piada|história|redação)\b/,
);

/** "Build it", "build the project": compiling what is there, or building what was discussed. */
export const BUILD_EXISTING = words(
  /^(build|compile|baue|construis|construye|construa|costruisci) (it|everything|all|the (project|app|code|solution|binary|image|docker image|site|docs|package|frontend|backend))\s*[.!]?$/,
);

export const QUESTION_WORD = words(
  /^((in|from|to|at|on|for|with|by|of|mit|aus|an|auf|für|von|zu|dans|de|à|pour|avec|en|con|desde|para|em|no|na|com|di|da|per|su|nel|nella) )?(what|why|how|when|where|which|who|whose|is|are|was|were|can|could|does|do|did|should|would|will|has|have|wie|warum|wo|wann|welche[rsmn]?|was|gibt es|qu'est|que|quoi|comment|pourquoi|quel(le)?s?|où|est-ce|qué|cómo|por qué|dónde|cuál(es)?|cuándo|hay|o que|como|onde|qual|quais|quando|por que|cos'è|cosa|come|perché|dove|quale|quali|quando|c'è)\b/,
);

/**
 * A reference to this workspace: a path or file name, code in backticks, "this/our/my <thing>", or
 * "the <code thing>" (the tests, the config: a particular one, here), in the six languages.
 */
const CODE_NOUNS =
  "code|codebase|repo|repository|project|app|application|tests?|test suite|config(uration)?|settings|build|ci|pipeline|server|client|frontend|backend|database|schema|migrations?|modules?|packages?|functions?|class(es)?|methods?|files?|folders?|director(y|ies)|architecture|structure|dependenc(y|ies)|logger|logging|routes?|router|routing|endpoints?|handlers?|components?|models?|entry ?point|readme|makefile|dockerfile|docs|source|src|scripts?|workflow|bug|error|crash|login|auth(entication)?|api|data flow|logic|middleware|services?|controllers?|views?|templates?|quer(y|ies)|tables?|store|state|cache|hooks?|plugins?|cli|commands?|requests?|responses?|types?|interfaces?|utils|helpers?|lib|library|parser|queue|jobs?|workers?";
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
export const WORKSPACE = words(
  new RegExp(
    [
      String.raw`(^|\s)(\.{0,2}[\\/]|[\w-]+[\\/])[\w./\\-]*`,
      String.raw`\b[\w-]+\.(ts|tsx|js|jsx|mjs|cjs|py|go|rs|java|kt|rb|php|cs|cpp|c|h|hpp|swift|json|ya?ml|toml|md|txt|csv|sql|sh|html|css|xml|ini|cfg|env|lock)\b`,
      "`[^`]+`",
      String.raw`\b(this|these|our|my|here)\b`,
      String.raw`\bthe\s+((?!(to|of|and|or|for|in|on|with|a|an)\s)[\w-]+\s+){0,2}(${CODE_NOUNS})\b`,
      String.raw`\b(which|what) (files?|functions?|modules?|classes|tests?|folders?)\b`,
      String.raw`\b(welche[rsn]?|quels?|quelles?|qué|cuál(es)?|quais|qual|quali|quale) (dateien|datei|funktionen|module|fichiers|fonctions|modules|archivos|funciones|módulos|arquivos|funções|file|funzioni|moduli)\b`,
      String.raw`\b(is there|are there|how many|do we have)\b.{0,30}\b(${CODE_NOUNS})\b`,
      String.raw`\b(do|did|are|were|should|can) we\b|\bwe (use|have|call|handle|store|load|build|deploy)\b`,
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

export const GREETING = words(
  /^((ok|okay|great|perfect|cool|nice|awesome|excellent|wonderful|oh|well|many|super|vielen|parfait|perfecto|perfeito|perfetto)[,!.]?\s+)?(hi|hello|hey|thanks|thank you|good (morning|evening)|hallo|danke|bonjour|merci|hola|gracias|olá|obrigad[oa]|ciao|grazie)\b/,
);

/** "I'd like a script that …", "Ich brauche eine API": a wish for something new. */
export const WANTS = words(
  /^((i|we)('d| would)? (need|want|like) (a|an|some|to have)|(ich brauche|wir brauchen) (eine?n?|ein)|(j'ai|nous avons) besoin d'?(un|une)|(necesito|necesitamos) (un|una)|(preciso|precisamos) de (um|uma)|(ho|abbiamo) bisogno di (un|una|uno))\b/,
);

/** "I want the API to return JSON errors": a wish about something that exists. */
export const WANTS_CHANGE = /^(i|we)('d| would)? (need|want|like) the\b/;

/** A symptom: "the build is broken", "npm install fails with ERESOLVE". */
export const SYMPTOM =
  /\b(fails?|failing|broken|crash(es|ing)?|doesn'?t (work|compile|build|start|run)|does not work|throws|exception|regression)\b/;

/** "… and save it as out.json", "… into a new file": a change whose result is a new file is a build. */
export const SAVES_AS_NEW = words(
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

/** Clauses joined by "and", "then" or a comma: "find the bug and fix it" asks for two acts. */
export const JOINED = words(
  /\s*[,;]\s*(?:and |then |and then )?|\s+(?:and then|and|then|und dann|und|dann|et puis|et|puis|y luego|y|luego|e depois|e poi|e|depois|poi)\s+/,
);
/** A how-to inside a sentence: its "and …" belongs to the question ("how to build X and deploy it"). */
export const HOW_TO = words(
  /\b(how (to|do|does|can|could|should|would|i|one)|wie (man|kann|baue|erstelle)|comment (on|je|faire|créer|construire|écrire)|cómo (se|puedo|hago|crear|construir|hacer|escribir)|como (se|posso|faço|criar|construir|fazer|escrever)|come (si|posso|faccio|creare|costruire|fare|scrivere))\b/,
);
/** A joined act with an object of its own ("and fix it", "and remove them", "and fix failures"). */
export const HAS_OBJECT = words(
  new RegExp(
    String.raw`^\p{L}+(\s+(up|out|down|off))?\s+(it|them|this|that|these|those|the|a|an|any|all|every|each|everything|anything|whatever|what|my|our|its|their|some|failures|errors|issues|bugs|problems|warnings|es|sie|le|la|les|lo|los|las|il|gli|o|os|as)\b`,
  ),
);

/** "… instead (of …)", in the six languages. */
export const INSTEAD = words(
  /\b(instead|stattdessen|statt|au lieu|plutôt|en (lugar|vez) de|em vez de|ao invés|invece)\b/,
);

/** Verbs that are seldom nouns: "… and add comments", "… and fix" ask for an act ("merge and rebase" does not). */
export const VERB_ONLY = words(
  /^(fix|repair|correct|resolve|solve|add|remove|delete|rename|refactor|create|write|implement|replace|simplify|improve|rewrite|optimi[sz]e|clean up|generate)\b/,
);

/**
 * A follow-up that only says to go on with the thread's request ("continue", "keep going", "try
 * again", "weiter", "continúa"): the run takes that request up again, its intent and effect too.
 */
export const GO_ON =
  /^(?:(?:ok(?:ay)?|yes|yeah|sure|please|pls|now|then|so|alright|right|good)[,!.]?\s+)*(?:continue|go on|keep going|carry on|resume|proceed|go ahead|try again|retry|finish(?: it| up| the (?:task|job|work))?|do it|keep at it|weiter(?:machen)?|mach weiter|fahre? fort|continuez|vas-y|continúa|sigue|continua|prosegui|vai avanti|continuar)(?:[,]?\s+(?:please|pls|then|now|bitte|por favor|s'il te plaît|per favore))?[\s.!…]*$/i;
