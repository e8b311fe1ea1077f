// Row shapes of the workspace tables and their conversions to the domain types, shared by the
// store modules (documents, annotations, import, models, suggestions).
import { SUGGESTION_RULES, type Annotation, type AnnotationOrigin, type DocumentSummary, type Passage, type ReviewStatus, type Revision, type SuggestionRule } from '@shared/domain'
import type { ModelKind } from '@shared/ipc'
import { StoreError } from './errors'
import type { ModelStatus } from './types'

export type Snapshot = NonNullable<Revision['after']>

export interface DocRow {
  id: number
  external_id: string
  title: string
  text: string
  passages: string
  tokens: string | null
  source_file: string | null
  imported_at: string
  status: ReviewStatus
  deleted: number
  deleted_at: string | null
  deleted_by: string | null
}

export interface SummaryRow {
  id: number
  external_id: string
  title: string
  status: ReviewStatus
  source_file: string | null
  imported_at: string
  annotation_count: number
  suggestion_count: number
  types: string | null
}

export interface AnnRow {
  id: number
  document_id: number
  start: number
  end: number
  type: string
  concept_id: string | null
  origin: AnnotationOrigin
  confidence: number | null
  /** JSON of a SuggestionRule (ruleOf), or null. */
  rule: string | null
  state: 'accepted' | 'suggested'
  deleted: number
  updated_at: string
  updated_by: string
}

export interface RevRow {
  id: number
  annotation_id: number
  document_id: number
  action: Revision['action']
  before: string | null
  after: string | null
  at: string
  by: string
}

export interface ModelRow {
  id: number
  name: string
  path: string
  config: string
  created_at: string
  kind: ModelKind
  status: ModelStatus
  active: number
  parent_id: number | null
  entity_types: string
  trained_on: string | null
  dev_scores: string | null
  training_summary: string | null
  distillation: string | null
  shipped: number
  adaptation: string | null
  benchmark: string | null
}

export const SUMMARY_COLUMNS = `
  d.id, d.external_id, d.title, d.status, d.source_file, d.imported_at,
  (SELECT count(*) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.state = 'accepted') AS annotation_count,
  (SELECT count(*) FROM annotations a WHERE a.document_id = d.id AND a.deleted = 0 AND a.state = 'suggested') AS suggestion_count,
  (SELECT json_group_array(DISTINCT a.type) FROM annotations a
   WHERE a.document_id = d.id AND a.deleted = 0 AND a.state = 'accepted') AS types`

export const now = (): string => new Date().toISOString()

export function titleOf(text: string, passages: Passage[]): string {
  const p = passages.find((x) => x.type.toLowerCase() === 'title') ?? passages[0]
  const raw = p ? text.slice(p.offset, p.offset + p.length) : (text.split('\n', 1)[0] ?? '')
  const title = raw.trim().replace(/\s+/g, ' ')
  return title.length > 300 ? `${title.slice(0, 299)}…` : title
}

export function snapshot(r: AnnRow): Snapshot {
  return {
    start: r.start,
    end: r.end,
    type: r.type,
    conceptId: r.concept_id,
    origin: r.origin,
    confidence: r.confidence,
    state: r.state,
  }
}

/** An annotation: what a revision records of it (its snapshot), with its identity and last change. */
export function toAnnotation(r: AnnRow): Annotation {
  return { id: r.id, documentId: r.document_id, ...snapshot(r), rule: r.rule === null ? null : (JSON.parse(r.rule) as SuggestionRule), updatedAt: r.updated_at, updatedBy: r.updated_by }
}

/**
 * A suggestion's rule as stored (JSON): the rule's name checked, its source span inside the
 * document, and the source's text read from the document rather than taken from the caller.
 */
export function ruleOf(value: SuggestionRule | null | undefined, doc: Pick<DocRow, 'text'>): string | null {
  if (value === null || value === undefined) return null
  const { rule, from } = value
  if (!(SUGGESTION_RULES as readonly string[]).includes(rule)) throw new StoreError('invalid_request', `Unknown suggestion rule '${String(rule)}'`)
  const inside = from && Number.isInteger(from.start) && Number.isInteger(from.end) && from.start >= 0 && from.end > from.start && from.end <= doc.text.length
  if (!inside) throw new StoreError('invalid_request', `The rule's source ${JSON.stringify(from)} is not a span of the document`)
  return JSON.stringify({ rule, from: { start: from.start, end: from.end, text: doc.text.slice(from.start, from.end) } } satisfies SuggestionRule)
}

export function toSummary(r: SummaryRow): DocumentSummary {
  const types = r.types ? (JSON.parse(r.types) as string[]).sort() : []
  return {
    id: r.id,
    externalId: r.external_id,
    title: r.title,
    status: r.status,
    annotationCount: r.annotation_count,
    suggestionCount: r.suggestion_count,
    types,
    sourceFile: r.source_file,
    importedAt: r.imported_at,
  }
}

export function normType(type: string): string {
  const t = typeof type === 'string' ? type.trim() : ''
  if (!t || t.length > 64) throw new StoreError('invalid_request', 'Entity type must be 1 to 64 characters')
  return t
}

export function normConcept(c: string | null | undefined): string | null {
  if (c === undefined || c === null) return null
  const t = c.trim()
  return t ? t : null
}
