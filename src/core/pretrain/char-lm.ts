// Training of the character language model (core/model/char-lm.ts) on plain text, one sentence per
// line, on onnxruntime: truncated back-propagation through time over B parallel streams of the
// text (the backward model's streams are the text reversed), T characters a chunk, the state
// carried from chunk to chunk (zeros at the start of an epoch and after a resume), Adam with a
// constant rate and a global gradient clip, as bench/torch_charlm_ref.py (the PyTorch prototype).
// The last 1 % of the text is held out: its bits per character are measured at the end of each
// epoch and of the run. Saves the model and the optimizer state every few minutes; resumable.

import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import type * as Ort from 'onnxruntime-node'
import { CHAR_LM_DEFAULTS, CHAR_LM_PARAMS, CharLmEncoder, charLmVocabulary, initCharLmParams, loadCharLm, saveCharLm, SENTENCE_BREAK, type CharLmDims } from '../model/char-lm'
import { CHAR_LM_STATE_OUTPUTS, charLmTrainGraph } from '../onnx/char-lm'
import { readRegularFile } from '../fs/read-regular'
import { Rng } from '../rng'
import { HostAdamW } from '../train/optimizer'
import { OrtGraphRunner } from '../train/ort'
import { loadOptimizerState, saveOptimizerState } from '../train/runner'
import { RunClock } from '../train/run-clock'

export const CHAR_LM_TRAIN_DEFAULTS = {
  batch: 64,
  steps: 100,
  lr: 2e-3,
  maxGradNorm: 1,
  seed: 42,
  saveEveryMinutes: 5,
  /** Text files larger than this are refused (the whole text is held in memory as code points). */
  maxTextBytes: 1 << 30,
} as const

export class CharLmTrainError extends Error {}

export interface CharLmTrainOptions {
  /** Plain-text files, one sentence per line. */
  text: string[]
  outDir: string
  /** Training time of the whole run (a resumed run counts what it did before). */
  minutes: number
  hidden?: number
  charDim?: number
  minCount?: number
  batch?: number
  steps?: number
  lr?: number
  seed?: number
  threads?: number
  resume?: boolean
  log?: (line: string) => void
  signal?: AbortSignal
}

/** What fastbioner.json records of a run (`char_lm`). */
export interface CharLmRecord {
  text: string[]
  batch: number
  steps: number
  lr: number
  seed: number
  /** Optimizer steps done. */
  step: number
  epoch: number
  /** Chunk position within the epoch's streams. */
  position: number
  seconds: number
  trainCharacters: number
  heldOutCharacters: number
  /** Held-out bits per character (mean of the two directions) after each epoch and at the end of each run. */
  heldOut: Array<{ step: number; epoch: number; seconds: number; bitsPerChar: number }>
}

export interface CharLmTrainResult extends CharLmRecord {
  outDir: string
  dims: CharLmDims
  charsPerSecond: number
}

const LN2 = Math.log(2)

function readText(paths: readonly string[]): string {
  const parts = paths.map((p) => readRegularFile(p, CHAR_LM_TRAIN_DEFAULTS.maxTextBytes, (file, problem) => new CharLmTrainError(`${file}: ${problem}`)).toString('utf8').replace(/\r\n?/g, SENTENCE_BREAK))
  return SENTENCE_BREAK + parts.map((s) => (s.endsWith(SENTENCE_BREAK) ? s : s + SENTENCE_BREAK)).join('')
}

/** `data` cut into `batch` equal streams [batch, cols + 1] (each stream's last character is the next one's target only). */
function streamsOf(data: Uint16Array, batch: number): { rows: Uint16Array[]; cols: number } {
  const cols = Math.floor((data.length - 1) / batch)
  return { rows: Array.from({ length: batch }, (_, b) => data.subarray(b * cols, b * cols + cols + 1)), cols }
}

export async function trainCharLm(o: CharLmTrainOptions): Promise<CharLmTrainResult> {
  const log = o.log ?? (() => {})
  let record: CharLmRecord
  let dims: CharLmDims
  let chars: string[]
  let params: Map<string, Float32Array>
  const saved = o.resume ? loadOptimizerState(o.outDir) : null
  if (o.resume) {
    if (!saved) throw new CharLmTrainError(`${o.outDir}: no optimizer state, so there is no character LM run to resume`)
    const lm = loadCharLm(o.outDir)
    const r = lm.metadata?.char_lm as CharLmRecord | undefined
    if (!r) throw new CharLmTrainError(`${o.outDir}: not a character LM run (no char_lm record in fastbioner.json)`)
    if (r.step !== saved.point.step) throw new CharLmTrainError(`${o.outDir}: weights (step ${r.step}) and optimizer state (step ${saved.point.step}) disagree; the last save was interrupted — start a new run`)
    record = r
    dims = lm.dims
    chars = lm.chars
    params = lm.params
  } else {
    if (existsSync(o.outDir) && readdirSync(o.outDir).length > 0) throw new CharLmTrainError(`${o.outDir} is not empty; choose a new folder, or resume the run in it`)
    record = {
      text: [...o.text],
      batch: o.batch ?? CHAR_LM_TRAIN_DEFAULTS.batch,
      steps: o.steps ?? CHAR_LM_TRAIN_DEFAULTS.steps,
      lr: o.lr ?? CHAR_LM_TRAIN_DEFAULTS.lr,
      seed: o.seed ?? CHAR_LM_TRAIN_DEFAULTS.seed,
      step: 0,
      epoch: 0,
      position: 0,
      seconds: 0,
      trainCharacters: 0,
      heldOutCharacters: 0,
      heldOut: [],
    }
    dims = { charVocabSize: 0, charDim: o.charDim ?? CHAR_LM_DEFAULTS.charDim, hidden: o.hidden ?? CHAR_LM_DEFAULTS.hidden }
    chars = []
    params = new Map()
  }

  log(`reading ${record.text.join(', ')}`)
  const text = readText(record.text)
  if (!o.resume) {
    const counts = new Map<string, number>()
    for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1)
    chars = charLmVocabulary(counts, o.minCount ?? CHAR_LM_DEFAULTS.minCount)
    dims = { ...dims, charVocabSize: chars.length }
    params = initCharLmParams(dims, record.seed)
  }
  const data = new CharLmEncoder(chars).encode(text)
  const heldOut = Math.max(2, Math.floor(data.length / 100))
  if (data.length - heldOut < record.batch * (record.steps + 1)) throw new CharLmTrainError(`${record.text.join(', ')}: ${data.length} characters are too few for ${record.batch} streams of ${record.steps}`)
  const forward = data.subarray(0, data.length - heldOut)
  const held = data.subarray(data.length - heldOut)
  const reversed = (a: Uint16Array) => a.slice().reverse()
  const train = [streamsOf(forward, record.batch), streamsOf(reversed(forward), record.batch)]
  const heldRows = Math.min(record.batch, Math.floor((held.length - 1) / record.steps))
  const heldStreams = [streamsOf(held, heldRows), streamsOf(reversed(held), heldRows)]
  record.trainCharacters = forward.length
  record.heldOutCharacters = held.length
  const { charVocabSize: V, hidden: H } = dims
  const B = record.batch
  const T = record.steps
  log(`${chars.length} characters in the vocabulary; ${forward.length} training characters per direction (${train[0].cols} per stream × ${B}), ${held.length} held out; LSTM ${H}, ${T} characters a chunk`)

  const optimizer = new HostAdamW(params, { lr: record.lr, weightDecay: 0, maxGradNorm: CHAR_LM_TRAIN_DEFAULTS.maxGradNorm }, { rowGradients: [CHAR_LM_PARAMS.embeddings] })
  if (saved) optimizer.loadState(saved.state)
  const t0 = performance.now()
  const trainer = await OrtGraphRunner.open(charLmTrainGraph({ dims, steps: T, dropout: CHAR_LM_DEFAULTS.dropout > 0 }), { threads: o.threads })
  log(`training graph opened in ${((performance.now() - t0) / 1000).toFixed(1)} s (${trainer.describe()})`)
  const ort = trainer.ort

  const ids = new BigInt64Array(2 * B * T)
  const next = new BigInt64Array(2 * B * T)
  const mask = new Float32Array(2 * B * T * H)
  const ones = new Float32Array(2 * B * T * H).fill(1)
  const zeros = (): Ort.Tensor => new ort.Tensor('float32', new Float32Array(2 * B * H), [2, B, H])
  /** Feeds of the chunk at `pos` of `streams` (both directions). */
  const chunk = (streams: typeof train, rows: number, pos: number, h: Ort.Tensor, c: Ort.Tensor, dropout: Float32Array): Record<string, Ort.Tensor> => {
    for (let d = 0; d < 2; d++) {
      for (let b = 0; b < rows; b++) {
        const s = streams[d].rows[b]
        const at = (d * rows + b) * T
        for (let k = 0; k < T; k++) {
          ids[at + k] = BigInt(s[pos + k] + d * V)
          next[at + k] = BigInt(s[pos + k + 1])
        }
      }
    }
    const n = 2 * rows * T
    return {
      char_ids: new ort.Tensor('int64', ids.subarray(0, n), [2, rows, T]),
      next_ids: new ort.Tensor('int64', next.subarray(0, n), [2, rows, T]),
      'state.h': h,
      'state.c': c,
      'dropout.output': new ort.Tensor('float32', dropout.subarray(0, n * H), [2, rows * T, H]),
    }
  }
  const evaluate = async (): Promise<number> => {
    const rows = heldStreams[0].rows.length
    let h: Ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * rows * H), [2, rows, H])
    let c: Ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * rows * H), [2, rows, H])
    let sum = 0
    let n = 0
    for (let pos = 0; pos + T + 1 <= heldStreams[0].cols + 1; pos += T) {
      const out = await trainer.outputs(params, chunk(heldStreams, rows, pos, h, c, ones))
      sum += (out.loss.data as Float32Array)[0]
      n++
      h = out[CHAR_LM_STATE_OUTPUTS.h]
      c = out[CHAR_LM_STATE_OUTPUTS.c]
    }
    return sum / Math.max(1, n) / LN2
  }
  const save = () => {
    mkdirSync(o.outDir, { recursive: true })
    saveOptimizerState(o.outDir, optimizer.state(), { epoch: record.epoch, step: record.step, dev: null, batchesIntoEpoch: record.position / T })
    saveCharLm(o.outDir, { dims, dropout: CHAR_LM_DEFAULTS.dropout, chars, params: optimizer.params, metadata: { char_lm: record } })
  }

  const rng = new Rng(record.seed * 7919 + record.step)
  let h = zeros()
  let c = zeros()
  // Time spent, pauses (SIGSTOP … SIGCONT) left out: what --minutes and the records count.
  const clock = new RunClock(record.seconds)
  let lastSave = performance.now()
  let lastLog = lastSave
  let logLoss = 0
  let logSteps = 0
  try {
    await clock.pausable(async () => {
      while (clock.seconds() < o.minutes * 60 && !o.signal?.aborted) {
        if (record.position + T + 1 > train[0].cols + 1) {
          record.epoch++
          record.position = 0
          h = zeros()
          c = zeros()
          const bpc = await evaluate()
          record.heldOut.push({ step: record.step, epoch: record.epoch, seconds: clock.seconds(), bitsPerChar: bpc })
          log(`epoch ${record.epoch} done; held-out ${bpc.toFixed(3)} bits per character`)
        }
        const r = await trainer.run(optimizer.params, chunk(train, B, record.position, h, c, rng.fillDropoutMask(mask, CHAR_LM_DEFAULTS.dropout)), optimizer.gradientBuffers)
        if (!Number.isFinite(r.loss)) throw new CharLmTrainError(`the loss became ${r.loss} at step ${record.step + 1}; lower the learning rate`)
        optimizer.applyGradients(r.grads, r.gradNormSq, { rows: r.rowGrads })
        h = r.outputs[CHAR_LM_STATE_OUTPUTS.h]
        c = r.outputs[CHAR_LM_STATE_OUTPUTS.c]
        record.position += T
        record.step++
        logLoss += r.loss
        logSteps++
        const now = performance.now()
        if (now - lastLog > 60_000) {
          log(`${(clock.seconds() / 60).toFixed(1)} min, epoch ${record.epoch + 1} at ${((100 * record.position) / train[0].cols).toFixed(1)} %: train ${(logLoss / logSteps / LN2).toFixed(3)} bits per character (${Math.round((2 * B * T * logSteps) / ((now - lastLog) / 1000))} characters/s, both directions)`)
          lastLog = now
          logLoss = 0
          logSteps = 0
        }
        if (now - lastSave > CHAR_LM_TRAIN_DEFAULTS.saveEveryMinutes * 60_000) {
          record.seconds = clock.seconds()
          save()
          lastSave = performance.now()
        }
      }
    })
    record.seconds = clock.seconds()
    const bpc = await evaluate()
    record.heldOut.push({ step: record.step, epoch: record.epoch, seconds: record.seconds, bitsPerChar: bpc })
    log(`stopped after ${(record.seconds / 60).toFixed(1)} min at step ${record.step}; held-out ${bpc.toFixed(3)} bits per character`)
    save()
  } finally {
    await trainer.dispose()
  }
  const charsTrained = record.step * 2 * B * T
  return { ...record, outDir: o.outDir, dims, charsPerSecond: charsTrained / Math.max(1e-9, record.seconds) }
}
