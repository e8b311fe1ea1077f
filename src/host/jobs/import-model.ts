// The importModel job: copies a checkpoint folder into the workspace, with a new head for a bare encoder.
import { typesOfLabels } from '../../core/nlp/bio'
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { TEMP_PREFIX, writeFileAtomic } from '../../core/fs/atomic'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { loadCheckpoint, saveCheckpoint } from '../../core/model/checkpoint'
import { benchmarkOf, findWeightFiles, METADATA_FILE, readMetadata } from '../../core/model/checkpoint-files'
import { readSafetensorsNames } from '../../core/model/safetensors'
import { isInt8Folder } from '../../core/onnx/quantize'
import type { ModelBenchmark } from '@shared/ipc'
import { ensureBackend, HostInputError, phase, summarize, type Job } from './common'
import { isWordTaggerFolder, loadWordTagger } from '../../core/model/word-tagger'
import { wordTaggerSummary } from './word-tagger'

/** A word tagger is validated whole (every size, every tensor finite) and its files copied as they are. */
function importWordTagger(source: string, dest: string, backend: string, benchmark: ModelBenchmark | null) {
  const m = loadWordTagger(source)
  mkdirSync(dest, { recursive: true })
  // Every file as it is (the model card too), as for BERT folders imported with keepFiles.
  for (const e of readdirSync(source, { withFileTypes: true })) {
    if (e.isFile() && e.name !== METADATA_FILE && !e.name.startsWith(TEMP_PREFIX)) copyFileSync(join(source, e.name), join(dest, e.name))
  }
  writeFileAtomic(join(dest, METADATA_FILE), [JSON.stringify({ ...m.metadata, imported: { from: source, at: new Date().toISOString(), freshHead: false } }, null, 2) + '\n'])
  return { summary: wordTaggerSummary(dest, m), notes: [], freshHead: false, backend, benchmark }
}

function hasClassifier(dir: string): boolean {
  return findWeightFiles(dir).some((f) => readSafetensorsNames(f).some((n) => /^(classifier|classifiers\.[^.]+)\.weight$/.test(n)))
}

export const importModel: Job<'importModel'> = async ({ source, dest, headLabels, seed, keepFiles }, ctx) => {
  const b = await ensureBackend()
  phase(ctx, `Reading ${source}`)
  // The scores the default model's folder states (its installer is the one caller with keepFiles).
  const benchmark = keepFiles ? benchmarkOf(readMetadata(source), join(source, METADATA_FILE)) : null
  if (isWordTaggerFolder(source)) return importWordTagger(source, dest, b.name, benchmark)
  // loadCheckpoint validates the folder and gives the clear errors (missing vocab.txt, a
  // pytorch_model.bin-only download with the one-line conversion command, shape mismatches).
  const ck = await loadCheckpoint(source, { trainable: false, seed })
  try {
    const notes = [...ck.notes]
    const freshHead = !hasClassifier(source)
    const int8 = isInt8Folder(source)
    if (freshHead && int8) throw new HostInputError(`${source} is an int8 model without a token-classification head: quantize a model that has one`)
    if (freshHead && keepFiles) throw new HostInputError(`${source} has no token-classification head: it cannot tag as it is`)
    if (freshHead) {
      if (!headLabels || headLabels.length < 3) {
        throw new HostInputError(
          `${source} has no token-classification head (a bare encoder such as BioBERT or PubMedBERT). ` +
            'Import annotated documents first: the new head is made for the workspace’s entity types.',
        )
      }
      for (const name of [...ck.model.heads.keys()]) if (name !== DEFAULT_HEAD) ck.model.removeHead(name)
      ck.model.setHead(DEFAULT_HEAD, headLabels, seed)
      const types = typesOfLabels(headLabels)
      notes.splice(0, notes.length, ...notes.filter((n) => !/fresh head/.test(n)))
      notes.push(
        `no classifier in the checkpoint: imported as a teacher with a new head for ${types.join(', ')} ` +
          '(randomly initialised): retrain it on reviewed documents before tagging',
      )
    }
    if (ctx.signal.aborted) throw new DOMException('import cancelled', 'AbortError')
    phase(ctx, `Writing ${dest}`)
    const metadata = { ...ck.metadata, imported: { from: source, at: new Date().toISOString(), freshHead } }
    if (keepFiles) {
      // Every file as it is: f16 or int8 weights stay as small as they were (a model.onnx among
      // them is copied but never run: core/onnx/graph-cache.ts).
      mkdirSync(dest, { recursive: true })
      for (const e of readdirSync(source, { withFileTypes: true })) {
        if (e.isFile() && e.name !== METADATA_FILE && !e.name.startsWith(TEMP_PREFIX)) copyFileSync(join(source, e.name), join(dest, e.name))
      }
      writeFileAtomic(join(dest, METADATA_FILE), [JSON.stringify(metadata, null, 2) + '\n'])
    } else if (int8) {
      // The loaded model holds the dequantized weights: saving it would write float32. Keep the
      // int8 files as they are (their ONNX graph is exported into the cache when first tagged).
      mkdirSync(dest, { recursive: true })
      for (const f of ['config.json', 'vocab.txt', 'tokenizer_config.json', 'model.safetensors']) if (existsSync(join(source, f))) copyFileSync(join(source, f), join(dest, f))
      writeFileAtomic(join(dest, METADATA_FILE), [JSON.stringify(metadata, null, 2) + '\n'])
    } else {
      await saveCheckpoint(dest, ck.model, ck.vocab, { lowercase: ck.lowercase, metadata })
    }
    return { summary: summarize(dest, ck.model), notes, freshHead, backend: b.name, benchmark }
  } finally {
    ck.model.dispose()
  }
}
