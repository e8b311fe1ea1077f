// vocab.txt IO (HF load_vocab semantics): one token per line, id = 0-based line number; and the
// WordPiece vocabulary of a tokenizer.json (HF tokenizers), its ids checked.
import { existsSync } from 'node:fs'
import { readRegularFile } from '../fs/read-regular'

export class VocabError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'VocabError'
  }
}

/** HF load_vocab: one token per line, id = 0-based line number; a repeated token keeps its last id. */
export function parseVocabText(content: string): string[] {
  if (content.charCodeAt(0) === 0xfeff) content = content.slice(1)
  const lines = content.split(/\r\n|\n|\r/)
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** Far above any WordPiece vocabulary (BERT's: 230 kB; a million tokens: some 20 MB). */
const MAX_VOCAB_BYTES = 256 * 1024 * 1024

/** The tokens of a vocab.txt file; a VocabError names the file when it is missing, unreadable or empty. */
export function readVocabFile(path: string): string[] {
  if (!existsSync(path)) throw new VocabError(`vocab file not found: ${path}`)
  // A regular file of bounded size: a device would never end, a FIFO would block.
  const content = readRegularFile(path, MAX_VOCAB_BYTES, (file, problem) => new VocabError(`vocab file ${file}: ${problem}`)).toString('utf8')
  const tokens = parseVocabText(content)
  if (tokens.length === 0) throw new VocabError(`vocab file ${path} is empty`)
  return tokens
}

/**
 * The WordPiece vocabulary of a parsed tokenizer.json (`model.type` 'WordPiece', `model.vocab`
 * token → id), in id order. The ids come from an untrusted file: each must be an integer in
 * [0, number of tokens) and used once, so the vocabulary has no gaps and nothing is allocated
 * beyond the tokens the file holds (an id of 2^31 would otherwise make a 2^31-slot array).
 * A VocabError names `file` and the offending token and id.
 */
export function vocabFromTokenizerJson(json: Record<string, unknown>, file: string): string[] {
  const model = json.model as { type?: unknown; vocab?: unknown } | null | undefined
  if (!model || typeof model !== 'object') throw new VocabError(`${file}: no "model" object (a WordPiece vocabulary is needed to tokenize)`)
  if (model.type !== 'WordPiece') {
    throw new VocabError(`${file}: model type ${JSON.stringify(model.type ?? null)} is not WordPiece; BERT models need a WordPiece vocabulary (vocab.txt)`)
  }
  const v = model.vocab
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new VocabError(`${file}: model.vocab must be an object of token → id`)
  const entries = Object.entries(v as Record<string, unknown>)
  if (entries.length === 0) throw new VocabError(`${file}: model.vocab is empty`)
  const vocab = new Array<string | undefined>(entries.length).fill(undefined)
  for (const [token, id] of entries) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= entries.length) {
      throw new VocabError(`${file}: token ${JSON.stringify(token)} has id ${JSON.stringify(id)}; ids must be integers 0..${entries.length - 1} (one per token)`)
    }
    const other = vocab[id]
    if (other !== undefined) throw new VocabError(`${file}: tokens ${JSON.stringify(other)} and ${JSON.stringify(token)} both have id ${id}`)
    vocab[id] = token
  }
  // n distinct ids in [0, n): every slot is filled.
  return vocab as string[]
}
