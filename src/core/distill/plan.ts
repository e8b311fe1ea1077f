// Which distillation several workspace models can give a student, decided from their folders'
// small files (no weights loaded): the app's Distil tab shows it before anything runs, and
// distill:start runs what it decided.
//
// Soft labels (core/distill) need every teacher to read the student's input: one tokenizer (the
// same vocabulary and casing) and, for a teacher with a character channel, the same channel as
// the student, which inherits the base teacher's. Anything else — a word tagger, BERTs of other
// vocabularies — can still teach through its tags (sequence-level KD, core/train/transfer): each
// teacher tags unlabelled documents once and the student learns the tags most teachers agree on.
// With a BERT among the teachers the student is a smaller copy of it (the base). Word taggers alone
// teach a new word tagger instead, through their agreed tags: on NCBI-disease devel the span
// majority of three word taggers scored 86.6 F1 against 84.4 for one alone, and a student taught
// by the majority beat one taught by a single teacher (0.817 vs 0.808). One word tagger alone
// teaches nothing its own retraining from corrections would not, so it needs a second teacher.
// Teachers must agree on the entity types: the student has one head, and averaging soft labels
// (or mixing tags) of different label sets would teach it types some teachers never predict.

import { createHash } from 'node:crypto'
import type { DistillMethod, StudentKind } from '../../shared/ipc'
import { readCheckpointInfo } from '../model/checkpoint-files'
import { isWordTaggerFolder } from '../model/word-tagger'

export interface PlanModel {
  id: number
  name: string
  dir: string
  layers: number
  entityTypes: readonly string[]
}

/** What a folder tells about teaching a student. */
export interface TeacherFacts {
  wordTagger: boolean
  /** BERT: a fingerprint of the vocabulary and casing (soft labels need one for all). */
  tokenizer: string | null
  /** BERT with a character channel: a fingerprint of its configuration and characters. */
  chars: string | null
}

export function teacherFacts(dir: string): TeacherFacts {
  if (isWordTaggerFolder(dir)) return { wordTagger: true, tokenizer: null, chars: null }
  const info = readCheckpointInfo(dir)
  const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16)
  return {
    wordTagger: false,
    tokenizer: hash(`${info.lowercase}\n${info.vocab.join('\n')}`),
    chars: info.config.charCnn && info.chars ? hash(`${JSON.stringify(info.config.charCnn)}\n${info.chars.chars.join('\n')}`) : null,
  }
}

export interface TeacherChoice {
  method: DistillMethod | null
  /** What the student is: a smaller copy of the base BERT, or a new word tagger (word-tagger teachers alone); null when nothing can run. */
  student: StudentKind | null
  summary: string
  problem: string | null
  /** Index in `chosen` of the teacher the student is a copy of; null without a BERT. */
  base: number | null
  maxLayers: number
}

const typesKey = (m: Pick<PlanModel, 'entityTypes'>) => [...new Set(m.entityTypes)].sort().join(', ')

/** Why `m` cannot teach beside `chosen` (null: it can). */
export function incompatibility(m: PlanModel, chosen: readonly PlanModel[]): string | null {
  if (m.entityTypes.length === 0) return 'it has no entity types'
  const other = chosen.find((c) => c.id !== m.id)
  if (other && typesKey(other) !== typesKey(m)) return `its entity types (${typesKey(m)}) differ from ${other.name}'s (${typesKey(other)})`
  return null
}

/**
 * The method for `chosen` (in the order given): soft labels when every teacher is a BERT that
 * reads the student's input, else teacher tags (into a new word tagger when every teacher is one);
 * `unreviewed` is how many documents the teachers would tag. The base is the deepest BERT (the first of equals), so the most student depths are open.
 */
export function chooseMethod(chosen: readonly PlanModel[], facts: readonly TeacherFacts[], unreviewed: number): TeacherChoice {
  const none = (problem: string, base: number | null = null): TeacherChoice => ({ method: null, student: null, summary: '', problem, base, maxLayers: 0 })
  const noUnreviewed = 'No unreviewed documents for the teachers to tag: import some unlabelled documents first'
  if (chosen.length === 0) return none('Choose at least one teacher')
  // The first teacher fixes the entity types; a later one that differs is the one named.
  for (const [k, m] of chosen.entries()) {
    const why = incompatibility(m, chosen.slice(0, Math.max(1, k)))
    if (why) return none(`${m.name} cannot teach${k > 0 ? ' with the others' : ''}: ${why}`)
  }
  const berts = chosen.map((_, k) => k).filter((k) => !facts[k].wordTagger)
  const n = chosen.length
  if (berts.length === 0) {
    if (n === 1) {
      return none(
        `${chosen[0].name} is a word tagger: alone its tags would teach a new model nothing its own retraining does not (retrain it from your corrections in the Models view); ` +
          'add another word tagger (their agreed tags teach a new word tagger) or a BERT (a smaller copy of it learns the tags)',
      )
    }
    const summary =
      `Label-level KD (word taggers give no soft labels): each teacher tags the workspace's unreviewed documents once, and a new word tagger (BiLSTM-CRF) ` +
      `learns the tags more than half of them agree on beside the reviewed documents. The KD mode and layers do not apply.`
    if (unreviewed === 0) return { ...none(noUnreviewed), summary }
    return { method: 'teacher-tags', student: 'word-tagger', summary, problem: null, base: null, maxLayers: 0 }
  }
  const base = berts.reduce((best, k) => (chosen[k].layers > chosen[best].layers ? k : best))
  const baseFacts = facts[base]
  const soft = berts.length === chosen.length && berts.every((k) => facts[k].tokenizer === baseFacts.tokenizer && (facts[k].chars === null || facts[k].chars === baseFacts.chars))
  if (soft) {
    const maxLayers = Math.min(...chosen.map((m) => m.layers))
    const summary =
      n === 1
        ? `Soft labels and layer matching from ${chosen[0].name}.`
        : `Soft labels of the ${n} teachers averaged, with a temperature ramp (0.5 up to T) and a feature loss per teacher on its own layers; the student starts as a copy of ${chosen[base].name}.`
    return { method: 'soft-labels', student: 'bert', summary, problem: null, base, maxLayers }
  }
  const why = chosen.some((_, k) => facts[k].wordTagger)
    ? 'a word tagger cannot give soft labels to a BERT student'
    : 'the BERT teachers do not share one tokenizer and character channel, so their soft labels cannot be averaged'
  const summary =
    `Label-level KD (${why}): each teacher tags the workspace's unreviewed documents once, and the student — a copy of ${chosen[base].name} — ` +
    `learns ${n > 1 ? 'the tags most of them agree on' : 'those tags'} beside the reviewed documents. The KD mode does not apply.`
  if (unreviewed === 0) return { ...none(noUnreviewed, base), summary }
  return { method: 'teacher-tags', student: 'bert', summary, problem: null, base, maxLayers: chosen[base].layers }
}
