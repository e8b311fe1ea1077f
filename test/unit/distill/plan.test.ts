// Which distillation a choice of teachers gets (core/distill/plan): soft labels only when every
// teacher is a BERT reading the student's input, teacher tags otherwise (word taggers alone: into
// a word-tagger student), refusals with a reason.
import { chooseMethod, incompatibility, type PlanModel, type TeacherFacts } from '@core/distill/plan'

const bert = (id: number, layers: number, types = ['Disease']): PlanModel => ({ id, name: `bert${id}`, dir: `/m/${id}`, layers, entityTypes: types })
const words = (id: number, types = ['Disease']): PlanModel => ({ id, name: `words${id}`, dir: `/m/${id}`, layers: 1, entityTypes: types })
const B: TeacherFacts = { wordTagger: false, tokenizer: 'v1', chars: null }
const W: TeacherFacts = { wordTagger: true, tokenizer: null, chars: null }

describe('chooseMethod', () => {
  it('one BERT: soft labels, as deep as it', () => {
    expect(chooseMethod([bert(1, 4)], [B], 0)).toMatchObject({ method: 'soft-labels', student: 'bert', problem: null, base: 0, maxLayers: 4 })
  })

  it('same-tokenizer BERTs: soft labels with the ramp, the deepest is the base, no deeper than the shallowest', () => {
    const c = chooseMethod([bert(1, 2), bert(2, 6), bert(3, 6)], [B, B, B], 0)
    expect(c).toMatchObject({ method: 'soft-labels', base: 1, maxLayers: 2 })
    expect(c.summary).toMatch(/3 teachers averaged, with a temperature ramp .* feature loss per teacher on its own layers; the student starts as a copy of bert2/)
  })

  it('a character channel other than the base\'s, or another vocabulary: teacher tags', () => {
    const chars = { ...B, chars: 'c1' }
    // The base has the channel and the other BERT has none: the student's inputs serve both.
    expect(chooseMethod([bert(1, 4), bert(2, 2)], [chars, B], 5).method).toBe('soft-labels')
    // The base has none, another has one: its characters would have no input.
    expect(chooseMethod([bert(1, 4), bert(2, 2)], [B, chars], 5)).toMatchObject({ method: 'teacher-tags', base: 0, maxLayers: 4 })
    expect(chooseMethod([bert(1, 4), bert(2, 2)], [B, { ...B, tokenizer: 'v2' }], 5).summary).toMatch(/do not share one tokenizer/)
  })

  it('a word tagger among BERTs: teacher tags from the BERT base, needing unreviewed documents', () => {
    const c = chooseMethod([words(1), bert(2, 3)], [W, B], 40)
    expect(c).toMatchObject({ method: 'teacher-tags', problem: null, base: 1, maxLayers: 3 })
    expect(c.summary).toMatch(/a word tagger cannot give soft labels .* each teacher tags the workspace's unreviewed documents once, .* learns the tags most of them agree on/)
    expect(chooseMethod([words(1), bert(2, 3)], [W, B], 0)).toMatchObject({ method: null, problem: expect.stringMatching(/No unreviewed documents/) })
  })

  it('two or more word taggers alone: teacher tags into a new word-tagger student, no layers, needing unreviewed documents', () => {
    const c = chooseMethod([words(1), words(2)], [W, W], 9)
    expect(c).toMatchObject({ method: 'teacher-tags', student: 'word-tagger', problem: null, base: null, maxLayers: 0 })
    expect(c.summary).toMatch(/a new word tagger \(BiLSTM-CRF\) learns the tags more than half of them agree on beside the reviewed documents\. The KD mode and layers do not apply/)
    expect(chooseMethod([words(1), words(2), words(3)], [W, W, W], 9)).toMatchObject({ method: 'teacher-tags', student: 'word-tagger' })
    expect(chooseMethod([words(1), words(2)], [W, W], 0)).toMatchObject({ method: null, student: null, problem: expect.stringMatching(/No unreviewed documents/) })
    // A BERT among them: the student stays a copy of the BERT.
    expect(chooseMethod([words(1), words(2), bert(3, 2)], [W, W, B], 9)).toMatchObject({ method: 'teacher-tags', student: 'bert', base: 2, maxLayers: 2 })
  })

  it('refuses one word tagger alone (retraining is what it needs), no teacher, and teachers of other entity types', () => {
    expect(chooseMethod([words(1)], [W], 9)).toMatchObject({ method: null, student: null, problem: expect.stringMatching(/words1 is a word tagger: alone its tags would teach .*retrain it from your corrections in the Models view.*add another word tagger/) })
    expect(chooseMethod([], [], 9).problem).toMatch(/Choose at least one teacher/)
    expect(chooseMethod([bert(1, 4), bert(2, 4, ['Chemical'])], [B, B], 9).problem).toMatch(/bert2 cannot teach with the others: its entity types \(Chemical\) differ from bert1's \(Disease\)/)
    expect(chooseMethod([words(1), words(2, ['Chemical'])], [W, W], 9)).toMatchObject({ method: null, problem: expect.stringMatching(/words2 cannot teach with the others: its entity types \(Chemical\) differ from words1's \(Disease\)/) })
  })
})

describe('incompatibility', () => {
  it('compares entity types as sets, and needs some', () => {
    expect(incompatibility(bert(2, 2, ['Gene', 'Disease']), [bert(1, 2, ['Disease', 'Gene'])])).toBeNull()
    expect(incompatibility(bert(2, 2, ['Disease']), [bert(1, 2, ['Disease', 'Gene'])])).toMatch(/\(Disease\) differ from bert1's \(Disease, Gene\)/)
    expect(incompatibility(bert(2, 2, []), [])).toBe('it has no entity types')
    // Itself alone is always compatible.
    expect(incompatibility(bert(1, 2), [bert(1, 2)])).toBeNull()
  })
})
