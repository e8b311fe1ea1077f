// Domain types shared by main, preload, renderer and tests. Imports nothing.

/** One entity mention as a half-open character span [start, end) into a document's text. */
export interface Mention {
  start: number
  end: number
  /** Covered text; must equal text.slice(start, end). */
  text: string
  /** Entity type, e.g. "Disease", "Chemical", "SpecificDisease". */
  type: string
  /** Optional normalised concept id (MeSH, OMIM, …); composite ids kept verbatim ("D001|D002"). */
  conceptId?: string
}

/** A labelled region of the document text (title, abstract, a structured-abstract section). */
export interface Passage {
  /** "title", "abstract", or a section label such as "BACKGROUND". */
  type: string
  /** Character offset of the passage in the document text. */
  offset: number
  length: number
}

/**
 * A document as every corpus reader produces and every writer consumes it.
 * `text` is the whole document; for PubMed-style documents it is `title + " " + abstract`
 * (PubTator's convention), and `passages` record where each part lies.
 */
export interface CorpusDocument {
  /** PMID when known, else an id of the source's own. */
  id: string
  text: string
  passages: Passage[]
  mentions: Mention[]
  /**
   * Token boundaries when the source was pre-tokenised (CoNLL); each [start, end) into `text`.
   * Sentences are separated in `text` by "\n" so they survive a round trip.
   */
  tokens?: Array<[number, number]>
}

export type CorpusFormat = 'pubtator' | 'conll' | 'pubmed-xml' | 'bioc-xml' | 'bioc-json' | 'brat' | 'text'
export const CORPUS_FORMATS: readonly CorpusFormat[] = ['pubtator', 'conll', 'pubmed-xml', 'bioc-xml', 'bioc-json', 'brat', 'text']

export type ReviewStatus = 'unreviewed' | 'in_progress' | 'done'
export const REVIEW_STATUSES: readonly ReviewStatus[] = ['unreviewed', 'in_progress', 'done']

export type AnnotationOrigin = 'gold' | 'model' | 'person'

/**
 * Why a model suggestion exists when a document rule (core/tag/document-rules) added it rather than
 * the model's decision on the sentence: the rule, and the model's mention whose words and type it
 * copies (character offsets into the document, and its text as it was).
 */
export interface SuggestionRule {
  /** 'abbreviation': an abbreviation the document defines, tagged where it is defined; 'repeat': the same words tagged elsewhere in the document. */
  rule: 'abbreviation' | 'repeat'
  from: { start: number; end: number; text: string }
}
export const SUGGESTION_RULES = ['abbreviation', 'repeat'] as const satisfies ReadonlyArray<SuggestionRule['rule']>

/** An annotation as stored in the workspace. */
export interface Annotation {
  id: number
  documentId: number
  start: number
  end: number
  type: string
  conceptId: string | null
  origin: AnnotationOrigin
  /** Model confidence in [0, 1] when origin is "model"; a rule's copy has its source's. */
  confidence: number | null
  /** Set when a document rule made the model's suggestion (kept when a person accepts it). */
  rule: SuggestionRule | null
  /** "suggested" model output not yet accepted, or "accepted" (everything else). */
  state: 'accepted' | 'suggested'
  updatedAt: string
  updatedBy: string
}

export interface DocumentSummary {
  id: number
  externalId: string
  title: string
  status: ReviewStatus
  /** Live accepted annotations: what the document's legend counts. */
  annotationCount: number
  /** Live model suggestions waiting for a decision (not in annotationCount). */
  suggestionCount: number
  /** Types of the accepted annotations, sorted. */
  types: string[]
  sourceFile: string | null
  importedAt: string
}

export interface DocumentDetail extends DocumentSummary {
  text: string
  passages: Passage[]
  tokens: Array<[number, number]> | null
  annotations: Annotation[]
  /**
   * The model (registry id) whose tagging made this document's suggestions — one tagging pass
   * replaces all of a document's suggestions, so they share it; null when never tagged or the
   * model is gone. The window marks them outdated when another model is active.
   */
  suggestionModelId: number | null
}

export type AnnotationSnapshot = Omit<Annotation, 'id' | 'documentId' | 'updatedAt' | 'updatedBy' | 'rule'>

export interface Revision {
  id: number
  annotationId: number
  documentId: number
  action: 'create' | 'update' | 'delete'
  /** What a person can change, and origin, confidence and state (a suggestion's rule never changes). */
  before: AnnotationSnapshot | null
  after: AnnotationSnapshot | null
  at: string
  by: string
}

/** A problem found while reading a corpus file. Errors abort the file; warnings do not. */
export interface CorpusIssue {
  severity: 'error' | 'warning'
  file: string
  /** 1-based line number, when the problem has one. */
  line?: number
  message: string
}
