/** The analyst's prompts: data, beside the code that fills them. */

export const UNIT_SYSTEM = `You analyse one source file of a larger codebase for a report. Answer with JSON only, matching the schema.
<rules>
- Be concrete: name real functions, modules and risks you can see in the text.
- If the text is one part of a longer file, describe what this part shows.
- Do not invent what you cannot see.
</rules>`;

export const UNIT_USER = (
  path: string,
  language: string,
  facts: string,
  part: string,
  index: number,
  parts: number,
) =>
  `<unit path="${path}" language="${language}" part="${index + 1} of ${parts}">
<structure>
${facts}
</structure>
<text>
${part}
</text>
</unit>`;

export const FOLDER_SYSTEM = `You summarise one folder of a codebase from the findings about its files and subfolders. Answer with JSON only, matching the schema.`;

export const FOLDER_USER = (path: string, files: string[], folders: string[]) =>
  `<folder path="${path}">
<files>
${files.join("\n") || "(none)"}
</files>
<subfolders>
${folders.join("\n") || "(none)"}
</subfolders>
</folder>`;

export const REPORT_SYSTEM = `You write the synthesis of a codebase analysis from folder summaries, the import graph and hotspots. Answer with JSON only, matching the schema.`;

export const REPORT_USER = (folders: string[], graph: string[], hotspots: string[]) =>
  `<codebase>
<folders>
${folders.join("\n")}
</folders>
<imports_between_folders>
${graph.join("\n") || "(none)"}
</imports_between_folders>
<hotspots>
${hotspots.join("\n") || "(none)"}
</hotspots>
</codebase>`;
