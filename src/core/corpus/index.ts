// The corpus layer: readers and writers for every CorpusFormat, format detection, and the
// byte-level checks (size, binary, UTF-8) shared by the app, the CLI and the benchmarks.
// Never imports 'electron'.
export * from './files'
export { CorpusError, formatIssue, fsProblem } from './errors'
export { detectFormat, formatOfOutputName, isCorpusFileName } from './detect'
export { readPubtator, writePubtator } from './pubtator'
export { readConll, readConllWithLines, writeConll, tokenize, DEFAULT_SENTENCES_PER_DOCUMENT, ConllParser } from './conll'
export type { ConllParsedDocument } from './conll'
export type { ConllReadOptions, ConllWriteOptions } from './conll'
export { readPubmedXml } from './pubmed-xml'
export { readBiocXml, readBiocJson, writeBiocJson, writeBiocXml } from './bioc'
export type { BiocWriteOptions } from './bioc'
export { readBrat, writeBrat } from './brat'
export { openCorpusStream, corpusChunks, encodeForPath, isGzipped, STREAMED_FORMATS } from './stream'
export type { CorpusStream, StreamOptions } from './stream'
export { readText } from './text'
export { parseTypeMap, mapMentionTypes, unusedSources } from './type-map'
export type { TypeMap } from './type-map'
export type { OffsetUnit, ReadOptions, ReadResult } from './util'
export { OFFSET_UNITS, OffsetMap } from './util'
export { stem as stemOf } from './util'

