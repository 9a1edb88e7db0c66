/**
 * Structural facts about source files, parsed with tree-sitter's WASM grammars (the ones VS Code
 * ships in @vscode/tree-sitter-wasm). Deterministic: no model involved.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { Language, Parser, type Node } from "web-tree-sitter";

const require = createRequire(import.meta.url);

const GRAMMAR_BY_EXT: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascript",
  ".py": "python",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
  ".rb": "ruby",
  ".php": "php",
  ".cs": "c-sharp",
  ".c": "cpp",
  ".h": "cpp",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".hpp": "cpp",
  ".cxx": "cpp",
  ".sh": "bash",
  ".bash": "bash",
  ".css": "css",
};

export interface Symbol {
  kind: string;
  name: string;
  line: number;
  exported: boolean;
}

export interface FileStructure {
  path: string;
  language: string;
  bytes: number;
  lines: number;
  imports: string[];
  symbols: Symbol[];
  /** Set when the grammar reported syntax errors. */
  parseErrors: boolean;
}

/** Grammars load once per process; the cache holds immutable objects only. */
const grammarCache = new Map<string, Promise<Language>>();
let parserReady: Promise<void> | undefined;

function grammar(name: string): Promise<Language> {
  let g = grammarCache.get(name);
  if (!g) {
    g = Language.load(require.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${name}.wasm`));
    grammarCache.set(name, g);
  }
  return g;
}

/** The grammar name for a file, or undefined when keel has no parser for it. */
export function languageOf(file: string): string | undefined {
  return GRAMMAR_BY_EXT[path.extname(file).toLowerCase()];
}

const IMPORT_TYPES =
  /^(import_statement|import_from_statement|import_declaration|use_declaration|preproc_include|using_directive|namespace_use_declaration)$/;
const DECLARATOR_PARENTS = /^(lexical_declaration|variable_declaration)$/;
const WRAPPERS = /^(export_statement|decorated_definition|declaration_list)$/;

/** Parses one file's text and lists its imports and top-level symbols. */
export async function describeSource(file: string, text: string): Promise<FileStructure> {
  const language = languageOf(file) ?? "text";
  const base: FileStructure = {
    path: file,
    language,
    bytes: Buffer.byteLength(text),
    lines: text === "" ? 0 : text.split("\n").length,
    imports: [],
    symbols: [],
    parseErrors: false,
  };
  if (language === "text") return base;
  parserReady ??= Parser.init();
  await parserReady;
  const parser = new Parser();
  parser.setLanguage(await grammar(language));
  const tree = parser.parse(text);
  if (!tree) return base;
  try {
    base.parseErrors = tree.rootNode.hasError;
    const visit = (node: Node, exported: boolean) => {
      if (IMPORT_TYPES.test(node.type)) {
        base.imports.push(importTarget(node));
        return;
      }
      if (WRAPPERS.test(node.type)) {
        for (const child of node.namedChildren)
          if (child) visit(child, exported || node.type === "export_statement");
        return;
      }
      if (DECLARATOR_PARENTS.test(node.type)) {
        for (const d of node.namedChildren) {
          const name = d?.childForFieldName("name");
          if (d && name)
            base.symbols.push({
              kind: "variable",
              name: name.text,
              line: d.startPosition.row + 1,
              exported,
            });
        }
        return;
      }
      const name = node.childForFieldName("name");
      if (name && name.text.length < 200) {
        base.symbols.push({
          kind: node.type.replace(/_(declaration|definition|item|specifier)$/, ""),
          name: name.text,
          line: node.startPosition.row + 1,
          exported,
        });
      }
    };
    for (const child of tree.rootNode.namedChildren) if (child) visit(child, false);
  } finally {
    tree.delete();
    parser.delete();
  }
  return base;
}

/** The module an import names when the grammar exposes it, else the statement on one line. */
function importTarget(node: Node): string {
  const source =
    node.childForFieldName("source") ??
    node.childForFieldName("module_name") ??
    node.childForFieldName("path");
  const raw = source?.text ?? node.text;
  return raw
    .replace(/\s+/g, " ")
    .replace(/^["'`]|["'`]$/g, "")
    .slice(0, 160);
}
