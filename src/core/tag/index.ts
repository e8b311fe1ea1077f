// Tagging: one path from documents to mentions for the CLI, the model host, comparison and
// evaluation. Open a tagger for a checkpoint folder (onnxruntime or tfjs) or a model in memory.
export { mergeHeadMentions, type HeadMention } from './merge'
export { applyDocumentRules, DEFAULT_DOCUMENT_RULES, findAbbreviations, NO_DOCUMENT_RULES, type AbbreviationDefinition, type DocumentRules } from './document-rules'
export { openTagger, taggerForModel, windowSettingsOf, type CheckpointTagger, type OpenTaggerOptions } from './open'
export {
  checkMaxLength, TAGGING_DEFAULTS, Tagger, TaggingError,
  type HeadWordScores, type TaggedMention, type TaggerHead, type TagOptions, type TagResult, type WindowSettings,
} from './tagger'
