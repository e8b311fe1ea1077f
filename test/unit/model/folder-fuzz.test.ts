// Model-folder fuzzing (issue 31): mutated model folders — the safetensors header and bytes,
// config.json, vocab.txt, tokenizer.json, tokenizer_config.json, fastbioner.json, an index and
// its shards, files replaced by folders or by links to /dev/zero or out of the folder — are read
// as the product reads them (folder-fuzz-worker.ts: small files, head check, ONNX export, tfjs
// load and tagging). Every case either tags or is refused with a project error naming the file;
// each runs in a child process under a time bound (killed past it: a hang) and a memory bound
// (its RSS polled, killed past it), the process recycled every few hundred cases.
// The seed is printed; rerun with MODEL_FUZZ_SEED=<seed>, more cases with MODEL_FUZZ_CASES=<n>
// (MODEL_FUZZ_RECYCLE: cases per worker process; MODEL_FUZZ_REPORT=<file>: a JSON summary).

import { fork, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const SEED = Number(process.env.MODEL_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32))
const CASES = Number(process.env.MODEL_FUZZ_CASES ?? 60)
const RECYCLE = Number(process.env.MODEL_FUZZ_RECYCLE ?? 250)
const CASE_MS = 5000
const RSS_LIMIT = 500 * 1024 * 1024
/** A worker's first case also pays for its start (tsx, tfjs): allowed this much more. */
const START_MS = 60_000

interface Reply {
  index: number
  outcome: 'ok' | 'refused' | 'bad'
  name?: string
  message?: string
  mutated: string[]
  ms: number
  rss: number
}

function vmRss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

class Worker {
  private child: ChildProcess | null = null
  private ready: Promise<void> | null = null
  private done = 0
  stderr = ''

  private start(): Promise<void> {
    const child = fork(join(__dirname, 'folder-fuzz-worker.ts'), [], {
      execArgv: ['--max-old-space-size=512', '--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '3' },
    })
    this.stderr = ''
    child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)))
    this.child = child
    this.done = 0
    return new Promise((resolve, reject) => {
      const onMessage = (m: { ready?: boolean }) => {
        if (m.ready) {
          child.off('message', onMessage)
          resolve()
        }
      }
      child.on('message', onMessage)
      child.once('exit', (code) => reject(new Error(`fuzz worker exited (${code}) before it was ready: ${this.stderr}`)))
    })
  }

  kill(): void {
    this.child?.kill('SIGKILL')
    this.child = null
    this.ready = null
  }

  /** One case: its reply, or 'hang' / 'memory' / 'crash' when the process had to be killed or died. */
  async run(index: number): Promise<Reply | { index: number; outcome: 'hang' | 'memory' | 'crash'; ms: number; rss: number; detail: string }> {
    if (this.done >= RECYCLE) this.kill()
    const fresh = !this.ready
    this.ready ??= this.start()
    await this.ready
    const child = this.child!
    this.done++
    const t0 = performance.now()
    const limit = CASE_MS + (fresh ? START_MS : 0)
    let peak = 0
    return new Promise((resolve) => {
      const finish = (r: Parameters<typeof resolve>[0]) => {
        clearInterval(poll)
        clearTimeout(timer)
        child.off('message', onMessage)
        child.off('exit', onExit)
        resolve(r)
      }
      const killWith = (outcome: 'hang' | 'memory', detail: string) => {
        this.kill()
        finish({ index, outcome, ms: performance.now() - t0, rss: peak, detail })
      }
      const poll = setInterval(() => {
        peak = Math.max(peak, vmRss(child.pid!))
        if (peak > RSS_LIMIT) killWith('memory', `RSS ${(peak / 2 ** 20).toFixed(0)} MB`)
      }, 50)
      const timer = setTimeout(() => killWith('hang', `no answer within ${limit} ms`), limit)
      const onMessage = (m: Reply) => {
        if (m.index !== index) return
        finish({ ...m, rss: Math.max(m.rss, peak) })
      }
      const onExit = (code: number | null, signal: string | null) => {
        this.child = null
        this.ready = null
        finish({ index, outcome: 'crash', ms: performance.now() - t0, rss: peak, detail: `exit ${code} ${signal ?? ''}: ${this.stderr.slice(-1500)}` })
      }
      child.on('message', onMessage)
      child.once('exit', onExit)
      child.send({ seed: SEED, index })
    })
  }
}

test(`fuzz: ${CASES} mutated model folders (seed ${SEED}) tag or are refused naming the file, each within ${CASE_MS} ms and ${RSS_LIMIT / 2 ** 20} MB`, async () => {
  console.log(`model-folder fuzz seed ${SEED}, ${CASES} cases, a fresh worker every ${RECYCLE} (MODEL_FUZZ_SEED / MODEL_FUZZ_CASES / MODEL_FUZZ_RECYCLE)`)
  const worker = new Worker()
  const counts = { ok: 0, refused: 0, bad: 0, hang: 0, memory: 0, crash: 0 }
  const failures: string[] = []
  const errorNames: Record<string, number> = {}
  /** A few refusals as they read, for the report. */
  const examples: string[] = []
  let slowest = 0
  let maxRss = 0
  try {
    for (let i = 0; i < CASES; i++) {
      const r = await worker.run(i)
      counts[r.outcome]++
      maxRss = Math.max(maxRss, r.rss)
      if (r.outcome === 'ok' || r.outcome === 'refused' || r.outcome === 'bad') slowest = Math.max(slowest, r.ms)
      if ('name' in r && r.name) {
        errorNames[r.name] = (errorNames[r.name] ?? 0) + 1
        if (examples.length < 12 && !examples.some((e) => e.startsWith(`${r.name}: ${r.message?.slice(0, 40)}`))) examples.push(`${r.name}: ${r.message?.slice(0, 300)}`)
      }
      if (r.outcome !== 'ok' && r.outcome !== 'refused') {
        const what = 'detail' in r ? r.detail : `${r.name}: ${r.message} (mutated ${r.mutated.join(', ')})`
        failures.push(`case ${i} (seed ${SEED}) ${r.outcome} after ${r.ms.toFixed(0)} ms: ${what}`)
      }
    }
  } finally {
    worker.kill()
  }
  const summary = { seed: SEED, cases: CASES, recycle: RECYCLE, ...counts, errorNames, slowestMs: Math.round(slowest), maxRssMB: Math.round(maxRss / 2 ** 20), examples, failures: failures.slice(0, 50) }
  console.log(`model-folder fuzz: ${JSON.stringify(summary)}`)
  if (process.env.MODEL_FUZZ_REPORT) writeFileSync(process.env.MODEL_FUZZ_REPORT, JSON.stringify(summary, null, 2) + '\n')
  expect(failures.slice(0, 20)).toEqual([])
  // The mutations must reach the checks: most cases are refused, yet some still tag.
  if (CASES >= 50) {
    expect(counts.refused).toBeGreaterThan(CASES / 4)
    expect(counts.ok).toBeGreaterThan(0)
  }
}, 120_000 + CASES * 2_000)
