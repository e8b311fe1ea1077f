// The head router: which head's guideline a document follows when two heads tag one type.
import { describe, expect, it } from 'vitest'
import { CheckpointError } from '@core/model/checkpoint-files'
import { buildLabelMap } from '@core/nlp/bio'
import { headRouters, routersOf, routerWords, routeText, trainHeadRouter } from '@core/tag/router'

const genetic = ['Germline mutations of the BRCA1 gene in carriers of hereditary breast cancer.', 'The APC gene mutation segregates with familial adenomatous polyposis in the family.']
const drugs = ['Cisplatin induced nephrotoxicity in rats treated with a high dose.', 'Haloperidol induced catalepsy and hypotension after the dose in patients.']

describe('head router', () => {
  it('reads words as lower-cased runs of letters and digits', () => {
    expect(routerWords('BRCA1-associated (Breast) cancer; Ünïcode 5-FU.')).toEqual(['brca1', 'associated', 'breast', 'cancer', 'ünïcode', '5', 'fu'])
  })

  it("routes a document to the head whose corpus uses its words, and to the larger corpus's head on words neither used", () => {
    const r = trainHeadRouter('Disease', [
      { head: 'ncbi', texts: genetic },
      { head: 'bc5', texts: [...drugs, 'The dose of the drug induced seizures in patients.'] },
    ])
    expect(r.heads).toEqual(['ncbi', 'bc5'])
    // Kept: words seen twice or more over both corpora; a word seen once tells the router nothing reliable.
    expect(Object.keys(r.words)).toContain('gene')
    expect(Object.keys(r.words)).not.toContain('polyposis')
    expect(routeText(r, 'A novel mutation of the gene in a family with breast cancer carriers.')).toBe('ncbi')
    expect(routeText(r, 'Seizures induced by a high dose of the drug in treated patients.')).toBe('bc5')
    // No known word: the prior decides (three drug documents against two).
    expect(routeText(r, 'Zebra quartz.')).toBe('bc5')
    expect(r.logPriors.map(Math.exp).map((p) => p.toFixed(2))).toEqual(['0.40', '0.60'])
  })

  it('builds a router for each type that two heads or more tag, from each head’s training texts', () => {
    const doc = (text: string) => ({ text })
    const labels = { ncbi: buildLabelMap(['Disease']).labels, bc5: buildLabelMap(['Disease']).labels, chemical: buildLabelMap(['Chemical']).labels }
    const tasks = [
      { head: 'ncbi', train: genetic.map(doc) },
      { head: 'bc5', train: drugs.map(doc) },
      { head: 'chemical', train: drugs.map(doc) },
    ]
    const routers = headRouters(tasks, labels)
    expect(routers.map((r) => [r.type, r.heads])).toEqual([['Disease', ['ncbi', 'bc5']]])
    expect(routeText(routers[0], 'mutation gene carriers family')).toBe('ncbi')
    expect(headRouters(tasks.filter((t) => t.head !== 'bc5'), { ncbi: labels.ncbi, chemical: labels.chemical })).toEqual([])
    // A head of the type with no documents: refused by name (its prior would be log 0).
    expect(() => headRouters([tasks[0], { head: 'bc5', train: [] }], labels)).toThrow(/head\(s\) bc5 tag Disease like another head but have no training documents/)
  })

  it('routes a document that two heads train on to the head with fewer documents', () => {
    const doc = (text: string) => ({ text })
    const labels = { ncbi: buildLabelMap(['Disease']).labels, disease: buildLabelMap(['Disease']).labels }
    // `disease` learns both corpora, `ncbi` one of them: the shared documents tell `ncbi`'s corpus.
    const tasks = [
      { head: 'ncbi', train: genetic.map(doc) },
      { head: 'disease', train: genetic.map(doc) },
      { head: 'disease', train: drugs.map(doc) },
    ]
    const [router] = headRouters(tasks, labels)
    expect(router).toEqual(trainHeadRouter('Disease', [{ head: 'ncbi', texts: genetic }, { head: 'disease', texts: drugs }]))
    expect(routeText(router, 'mutation gene carriers family')).toBe('ncbi')
    // Two heads on the same documents: neither is narrower, both keep them.
    expect(headRouters([tasks[0], tasks[1]], labels)[0]).toEqual(trainHeadRouter('Disease', [{ head: 'ncbi', texts: genetic }, { head: 'disease', texts: genetic }]))
  })

  it('reads a router back from fastbioner.json as written, and refuses a malformed one naming the file and the key', () => {
    const r = trainHeadRouter('Disease', [
      { head: 'ncbi', texts: genetic },
      { head: 'bc5', texts: drugs },
    ])
    const file = '/models/x/fastbioner.json'
    const heads = ['ncbi', 'bc5', 'chemical']
    const back = routersOf(JSON.parse(JSON.stringify([r])), file, heads)
    expect(back).toHaveLength(1)
    expect(back[0].heads).toEqual(r.heads)
    expect(routeText(back[0], 'mutation gene carriers')).toBe(routeText(r, 'mutation gene carriers'))
    expect(routersOf(undefined, file, heads)).toEqual([])
    const plain = JSON.parse(JSON.stringify(r))
    const bad: Array<[unknown, RegExp]> = [
      [{}, /must be a list/],
      [[{ ...plain, heads: ['ncbi', 'gene'] }], /heads must name 2 to 16 distinct heads of the model \(ncbi, bc5, chemical\)/],
      [[{ ...plain, heads: ['ncbi', 'ncbi'] }], /distinct heads/],
      [[{ ...plain, logPriors: [0.5, -1] }], /logPriors must hold 2 finite log-probabilities/],
      [[{ ...plain, words: { gene: [-1] } }], /words\["gene"\] must hold 2/],
      [[{ ...plain, words: { gene: [-1, null] } }], /words\["gene"\] must hold 2/],
      [[{ ...plain, words: [] }], /words must be an object/],
      [[{ ...plain, words: { ['x'.repeat(101)]: [-1, -1] } }], /a word of 101 characters/],
      [[plain, plain], /Disease is routed twice/],
      [[{ ...plain, type: 7 }], /type must be a type name/],
    ]
    for (const [value, message] of bad) {
      expect(() => routersOf(value, file, heads)).toThrow(CheckpointError)
      expect(() => routersOf(value, file, heads)).toThrow(new RegExp(`^/models/x/fastbioner.json: routers.*${message.source}`))
    }
    // A word named like an object's own machinery is a word like any other, and sets no prototype.
    const proto = routersOf(JSON.parse(`[${JSON.stringify({ ...plain, words: {} }).replace('"words":{}', '"words":{"__proto__":[-0.1,-9],"constructor":[-0.1,-9]}')}]`), file, heads)
    expect(Object.getPrototypeOf(proto[0].words)).toBeNull()
    expect(routeText(proto[0], 'constructor')).toBe('ncbi')
    expect(routeText(proto[0], 'tostring hasownproperty')).toBe(routeText(proto[0], ''))
  })
})
