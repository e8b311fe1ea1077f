// `fastbioner encode --model DIR --input FILE --out FILE`
import { fsProblem } from '../../core/corpus'
import { readFile } from 'node:fs/promises'
import * as tf from '@tensorflow/tfjs-core'
import { DEFAULT_HEAD } from '../../core/model/bert'
import { CliError, loadModel, runCommand, startBackend } from './_ml'
import { flagOptions, requireOpt, valueOptions } from './_options'
import { checkOutputPath, writeOutputFile } from './_output'

const USAGE = `usage: fastbioner encode --model DIR --input FILE --out FILE [--head NAME] [--force]

Runs the encoder (inference mode, no dropout) on given token ids and writes every output.

  --model DIR    checkpoint directory
  --input FILE   JSON {"input_ids": [[…]], "attention_mask": [[…]], "token_type_ids": [[…]]},
                 each batch × length integers; attention_mask defaults to all 1,
                 token_type_ids to all 0
  --out FILE     JSON {"logits": batch × length × labels,
                       "hidden_states": (layers + 1) × batch × length × hidden
                                        (embedding output, then each layer),
                       "attentions": layers × batch × heads × length × length,
                       "labels": [...], "head": NAME}
                 ('-' for standard output); a new file: one already there is left as it is
  --force        replace an existing --out file
  --head NAME    classifier head for "logits" (default: 'default', else the first head)
  -q, --quiet    no backend line on standard error
  -h, --help     this text

exit codes: 0 done, 1 input/model problem, 2 usage error`

type Matrix = number[][]

function readMatrix(j: Record<string, unknown>, key: string, file: string, shape?: [number, number]): Matrix | undefined {
  const m = j[key]
  if (m === undefined || m === null) return undefined
  if (!Array.isArray(m) || m.length === 0 || !m.every((row) => Array.isArray(row))) {
    throw new CliError(`${file}: "${key}" must be a non-empty array of arrays (batch × length)`)
  }
  const rows = m as unknown[][]
  const len = rows[0].length
  rows.forEach((row, i) => {
    if (row.length !== len) throw new CliError(`${file}: "${key}" row ${i} has ${row.length} entries, row 0 has ${len}; rows must have equal length`)
    row.forEach((x, k) => {
      if (!Number.isInteger(x)) throw new CliError(`${file}: "${key}"[${i}][${k}] is ${JSON.stringify(x)}, not an integer`)
    })
  })
  if (len === 0) throw new CliError(`${file}: "${key}" rows are empty`)
  if (shape && (rows.length !== shape[0] || len !== shape[1])) {
    throw new CliError(`${file}: "${key}" is ${rows.length} × ${len} but input_ids is ${shape[0]} × ${shape[1]}`)
  }
  return rows as Matrix
}

const OPTIONS = { ...valueOptions('model', 'input', 'out', 'head'), ...flagOptions('force') }

export async function run(argv: string[]): Promise<number> {
  return runCommand('encode', USAGE, argv, OPTIONS, async (v) => {
    const modelDir = requireOpt(v.model, '--model')
    const inputPath = requireOpt(v.input, '--input')
    const outPath = requireOpt(v.out, '--out')
    checkOutputPath(outPath, { flag: '--out', kind: 'file', inputs: [inputPath, modelDir], replace: v.force, replaceFlag: '--force' })

    let json: Record<string, unknown>
    try {
      const parsed: unknown = JSON.parse(await readFile(inputPath, 'utf8'))
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object')
      json = parsed as Record<string, unknown>
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      throw new CliError(`${inputPath}: ${code ? `cannot read the file: ${fsProblem(e)}` : `invalid JSON (${(e as Error).message})`}`)
    }
    const ids = readMatrix(json, 'input_ids', inputPath)
    if (!ids) throw new CliError(`${inputPath}: "input_ids" is missing`)
    const shape: [number, number] = [ids.length, ids[0].length]
    const mask = readMatrix(json, 'attention_mask', inputPath, shape)
    const types = readMatrix(json, 'token_type_ids', inputPath, shape)

    await startBackend(v.quiet ?? false)
    const { model } = await loadModel(modelDir)
    try {
      const c = model.config
      ids.forEach((row, i) =>
        row.forEach((id, k) => {
          if (id < 0 || id >= c.vocabSize) throw new CliError(`${inputPath}: input_ids[${i}][${k}] = ${id} is outside the vocabulary (0..${c.vocabSize - 1})`)
        }),
      )
      types?.forEach((row, i) =>
        row.forEach((t, k) => {
          if (t < 0 || t >= c.typeVocabSize) throw new CliError(`${inputPath}: token_type_ids[${i}][${k}] = ${t} is outside 0..${c.typeVocabSize - 1}`)
        }),
      )
      if (shape[1] > c.maxPositionEmbeddings) throw new CliError(`${inputPath}: length ${shape[1]} exceeds the model's max_position_embeddings ${c.maxPositionEmbeddings}`)
      const head = v.head ?? (model.heads.has(DEFAULT_HEAD) ? DEFAULT_HEAD : [...model.heads.keys()][0])
      if (!head || !model.heads.has(head)) throw new CliError(`--head ${v.head}: the model has heads ${[...model.heads.keys()].join(', ') || '(none)'}`, 2)

      const result = tf.tidy(() => {
        const out = model.forward(
          {
            inputIds: tf.tensor2d(ids, shape, 'int32'),
            attentionMask: mask ? tf.tensor2d(mask, shape, 'int32') : (tf.ones(shape, 'int32') as tf.Tensor2D),
            tokenTypeIds: types ? tf.tensor2d(types, shape, 'int32') : (tf.zeros(shape, 'int32') as tf.Tensor2D),
          },
          { training: false, outputHiddenStates: true, outputAttentions: true, heads: [head] },
        )
        return {
          logits: out.logits[head].arraySync(),
          hidden_states: (out.hiddenStates ?? []).map((h) => h.arraySync()),
          attentions: (out.attentions ?? []).map((a) => a.arraySync()),
        }
      })
      const body = JSON.stringify({ ...result, labels: model.heads.get(head)!.labels, head }) + '\n'
      await writeOutputFile(outPath, body)
    } finally {
      model.dispose()
    }
    return 0
  })
}
