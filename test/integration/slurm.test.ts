// The Slurm path of batch tagging, on a real single-node Slurm (scripts/slurm-local.sh: Debian's
// slurm-wlm + munge, which .ci/run installs): deploy/slurm/tag-pubmed.sbatch as a 2-task array
// over three input files, one task requeued (killed and restarted) while it writes its output,
// and the outputs compared with a single-process run.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writePubtator } from '@core/corpus'
import { TEMP_PREFIX } from '@core/fs/atomic'
import { useBackend } from '@core/model/backend'
import { BertTokenClassifier, makeBertConfig } from '@core/model/bert'
import { saveCheckpoint } from '@core/model/checkpoint'
import { buildLabelMap } from '@core/nlp/bio'
import { syntheticDocs, syntheticVocab } from '../unit/train/synthetic'

const ROOT = resolve(__dirname, '../..')
const hasSlurm = existsSync('/usr/bin/sbatch') && existsSync('/usr/sbin/slurmctld') && existsSync('/usr/sbin/munged')
const isRoot = process.getuid?.() === 0
const why = !hasSlurm ? 'slurm-wlm and munge are not installed (apt-get install slurm-wlm munge; .ci/run does)' : !isRoot ? 'slurmd must run as root to start jobs' : ''
if (why) console.warn(`[skip] Slurm batch-tagging test: ${why}`)

let dir: string
let env: NodeJS.ProcessEnv

function slurm(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { env, encoding: 'utf8' }).trim()
}

function outputsOf(folder: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const n of readdirSync(folder).sort()) {
    if (n.endsWith('.done.json') || n.endsWith('.log')) continue
    const b = readFileSync(join(folder, n))
    out[n] = n.endsWith('.gz') ? gunzipSync(b).toString('utf8') : b.toString('utf8')
  }
  return out
}

/** A TCP port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolvePort(port))
    })
  })
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now()
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe.skipIf(!!why)('batch tagging on Slurm', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'slurm-tag-'))
    // Ports of our own: another Slurm on this machine (a second test run) must not answer us.
    const [ctld, slurmd] = [await freePort(), await freePort()]
    const started = spawnSync('bash', [join(ROOT, 'scripts/slurm-local.sh'), 'start', join(dir, 'slurm')], {
      encoding: 'utf8',
      env: { ...process.env, SLURMCTLD_PORT: String(ctld), SLURMD_PORT: String(slurmd) },
    })
    if (started.status !== 0) throw new Error(`Slurm did not start: ${started.stderr}`)
    env = { ...process.env, SLURM_CONF: join(dir, 'slurm', 'slurm.conf') }
  }, 120_000)
  afterAll(() => {
    if (!dir) return
    spawnSync('scancel', ['--user', 'root'], { env })
    spawnSync('bash', [join(ROOT, 'scripts/slurm-local.sh'), 'stop', join(dir, 'slurm')])
    // The daemons may still be saving state for a moment after the signal.
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 })
  })

  it('an array job tags every shard, survives a requeue mid-output and matches a single-process run', async () => {
    await useBackend('wasm')
    const vocab = syntheticVocab()
    const config = makeBertConfig({ vocabSize: vocab.length, hiddenSize: 32, numHiddenLayers: 1, numAttentionHeads: 2, intermediateSize: 64, maxPositionEmbeddings: 64 })
    const model = BertTokenClassifier.random(config, 5, { default: buildLabelMap(['Disease']).labels })
    const modelDir = join(dir, 'model')
    await saveCheckpoint(modelDir, model, vocab, { lowercase: true, metadata: { training: { maxLength: 32, sentenceLevel: true } } })
    model.dispose()
    const inDir = join(dir, 'in')
    mkdirSync(inDir)
    // Sorted: a, b, c → shard 1 of 2 owns a and c, shard 2 owns the big b.
    writeFileSync(join(inDir, 'a-small.pubtator.gz'), gzipSync(writePubtator(syntheticDocs(20, 1, 3, 'a-'))))
    writeFileSync(join(inDir, 'b-big.pubtator'), writePubtator(syntheticDocs(800, 2, 3, 'b-')))
    writeFileSync(join(inDir, 'c-small.pubtator.gz'), gzipSync(writePubtator(syntheticDocs(20, 3, 3, 'c-'))))
    const out = join(dir, 'out')
    const cli = `${process.execPath} ${join(ROOT, 'bin/fastbioner.js')}`
    const jobId = slurm('sbatch', [
      '--parsable', '--array=1-2', '-c', '1', '--mem=1G', `--chdir=${dir}`,
      `--export=ALL,IN=${inDir},OUT=${out},MODEL=${modelDir},FASTBIONER=${cli}`,
      join(ROOT, 'deploy/slurm/tag-pubmed.sbatch'),
    ]).split(';')[0]
    // Requeue the big task while its output is being written: Slurm kills it and starts it again.
    await until('task 2 to write its output', () => existsSync(out) && readdirSync(out).some((n) => n.startsWith(TEMP_PREFIX) && n.endsWith('b-big.pubtator')), 120_000)
    slurm('scontrol', ['requeue', `${jobId}_2`])
    await until('the array to finish', () => slurm('squeue', ['-h', '-j', jobId]) === '', 240_000)
    expect(slurm('scontrol', ['show', 'job', `${jobId}_2`])).toMatch(/Restarts=1\b/)
    for (const t of [1, 2]) expect(slurm('scontrol', ['show', 'job', `${jobId}_${t}`])).toMatch(/JobState=COMPLETED\b/)
    expect(readdirSync(out).filter((n) => n.startsWith(TEMP_PREFIX))).toEqual([])

    const single = join(dir, 'single')
    execFileSync(process.execPath, [join(ROOT, 'bin/fastbioner.js'), 'tag', '--model', modelDir, '--in', inDir, '--out-dir', single, '-q'], { stdio: 'ignore' })
    const fromSlurm = outputsOf(out)
    expect(Object.keys(fromSlurm)).toEqual(['a-small.pubtator.gz', 'b-big.pubtator', 'c-small.pubtator.gz'])
    expect(fromSlurm).toEqual(outputsOf(single))
  }, 420_000)
})
