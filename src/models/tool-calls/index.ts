export { parseToolCalls } from "./parse.js";
export {
  FORMAT_NAMES,
  type FormatName,
  type ParseOptions,
  type ParseResult,
  type ParsedCall,
} from "./types.js";
