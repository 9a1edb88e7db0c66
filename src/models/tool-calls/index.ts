export { argumentsFromText, parseToolCalls } from "./parse.js";
export { FORMATS, type FormatRecord } from "./formats.js";
export {
  FORMAT_NAMES,
  type FormatName,
  type ParseOptions,
  type ParseResult,
  type ParsedCall,
} from "./types.js";
