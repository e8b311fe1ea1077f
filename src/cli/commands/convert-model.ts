// `fastbioner convert-model --model DIR`
import { convertWeightsToSafetensors } from '../../core/model/convert'
import { CliError, runCommand, stderrLog, writeJsonLine } from './_ml'
import { valueOptions } from './_options'

const USAGE = `usage: fastbioner convert-model --model DIR [options]

Writes model.safetensors into a model folder whose weights are PyTorch's pytorch_model.bin (or the
shards of pytorch_model.bin.index.json), so that later loads read it directly. Every command and
the app already read pytorch_model.bin as it is — weights only, through a restricted unpickler
that refuses anything but tensors — converting once just saves that work on each load. Tensors
keep their names, dtypes and values; the new file is written under a temporary name and moved
into place when complete; the .bin files are left untouched. A summary goes to standard error,
a JSON line to standard output.

  --model DIR          the model folder (config.json, vocab.txt, pytorch_model.bin)
  -q, --quiet          no summary on standard error
  -h, --help           this text

exit codes: 0 done, 1 input/model problem (including a folder that already has safetensors), 2 usage error`

const OPTIONS = { ...valueOptions('model') }

export async function run(argv: string[]): Promise<number> {
  return runCommand('convert-model', USAGE, argv, OPTIONS, async (v) => {
    if (!v.model) throw new CliError('--model is required', 2)
    const say = stderrLog(v.quiet ?? false)
    const t0 = Date.now()
    const r = convertWeightsToSafetensors(v.model)
    say(`wrote ${r.to}: ${r.tensors} tensors, ${(r.bytes / 1e6).toFixed(1)} MB, from ${r.from.join(', ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    writeJsonLine({ model: v.model, from: r.from, to: r.to, tensors: r.tensors, bytes: r.bytes })
    return 0
  })
}
