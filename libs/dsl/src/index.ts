// @context-guru/dsl: the declarative filter engine. Pure text in, text + lossiness out; it knows
// nothing about messages, stashes or markers (that is cmdfilter's job in @context-guru/components).
export { DSL_ERRORS, DslError, type DslErrorCode, type DslErrorLocation } from './errors';
export { Pattern, MAX_PROGRAM_SIZE, stripAnsi } from './regex';
export {
  Lossiness,
  type CompiledFilter,
  type FilterResult,
  type MatchOutputRule,
  type ReplaceRule,
  compareFilters,
  filterMatches,
} from './filter';
export { applyFilter } from './stages';
export { FILTER_FIELDS, type InlineTest, type ParsedDocument, parseFilterDocument } from './document';
export { type TestFailure, type Transcript, runInlineTest, runInlineTests, splitTranscript } from './inline-tests';
export { type DocumentCheck, checkFilterDocument, describeFailure, failureError, loadFilterDocument } from './load';
export { FilterSet, type Selection } from './filter-set';
export {
  COMMAND_MAX_POINTS,
  SELECTOR_MAX_CHARS,
  type OutputSelector,
  commandLine,
  firstLine,
  outputSelector,
  selectorCandidates,
} from './selector';
export { BUILTIN_DIR, builtinDocuments, builtinFiles, builtinFilterSet } from './builtins';
export { runCli } from './cli';
export { type ActCounts, type ActSnapshot, FilterActStats, type SelectorMiss, SelectorMissLedger, clipUtf8, isBlobShaped } from './stats';
