// `fastbioner get REPO_ID [--revision R] [--out DIR]` and `fastbioner get --list`: the only
// command that touches the network, and only when run.
import { parseArgs } from 'node:util'
import { formatBytes as mb, getModel, HubError, type HubPlan, type HubProgress } from '../../core/hub/download'
import { hubCacheDirs, listCachedModels } from '../../core/model/hf-cache'
import { CliError, runCommand, stderrLog, stopOnCtrlC, writeJsonLine } from './_ml'
import { flagOptions, valueOptions } from './_options'
import { checkOutputPath } from './_output'

const USAGE = `usage: fastbioner get REPO_ID [--revision R] [--out DIR] [options]
       fastbioner get --list [--cache-dir DIR]

Downloads a BERT model from the Hugging Face Hub — config.json, the tokenizer files (vocab.txt,
tokenizer.json, tokenizer_config.json, special_tokens_map.json) and one set of weights
(model.safetensors, else pytorch_model.bin, or their index and shards); nothing else — into the
Hugging Face cache, laid out as huggingface_hub does (models--org--name/{blobs,snapshots,refs}), so
that transformers and FastBioNER share the files. Afterwards REPO_ID works offline wherever a
model folder is asked for (train --init, distill --teacher, tag/eval --model).

The total size is shown before anything is downloaded, and free disk space is checked. An
interrupted download (Ctrl-C, a dropped connection) is resumed by running the same command again.
Every file is checked against the sha256 (git blob id for small files) the Hub lists; a corrupted
download is removed. Without a network, or with HF_HUB_OFFLINE=1, a model already in the cache is
found there. Progress goes to standard error, a JSON line (with the snapshot folder) to standard
output.

  REPO_ID             org/name, e.g. dmis-lab/biobert-base-cased-v1.2
  --revision R        branch, tag or commit (default main)
  --out DIR           also copy the files into this plain folder
  --force             with --out: replace a model already in DIR
  --cache-dir DIR     the hub folder to use (default: $HF_HUB_CACHE, else $HF_HOME/hub, else
                      ~/.cache/huggingface/hub)
  --dry-run           show the files, their sizes and what is cached; download nothing
  --list              list the BERT models in the cache (offline): size, layers × hidden, and
                      whether it has a token-classification head
  -q, --quiet         only errors on standard error
  -h, --help          this text

environment: HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (gated or private models),
HTTPS_PROXY / HTTP_PROXY / NO_PROXY, HF_HUB_OFFLINE, HF_HUB_CACHE, HF_HOME.

exit codes: 0 done, 1 download or model problem (gated, not found, no network, corrupted), 2 usage error`

const OPTIONS = { ...valueOptions('revision', 'out', 'cache-dir'), ...flagOptions('dry-run', 'list', 'force') }

/** The repo id given as a positional argument, and the rest for runCommand's strict parse. */
function splitRepoId(argv: string[]): { rest: string[]; repoIds: string[] } {
  try {
    const { tokens } = parseArgs({ args: argv, options: { ...OPTIONS, quiet: { type: 'boolean', short: 'q' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true, tokens: true })
    const positional = new Set(tokens.filter((t) => t.kind === 'positional').map((t) => t.index))
    return { rest: argv.filter((_, i) => !positional.has(i)), repoIds: argv.filter((_, i) => positional.has(i)) }
  } catch {
    // runCommand's parse reports the problem
    return { rest: argv, repoIds: [] }
  }
}

function describePlan(plan: HubPlan, log: (l: string) => void): void {
  log(`${plan.repoId}@${plan.revision} (commit ${plan.commit.slice(0, 10)}) from ${plan.endpoint} into ${plan.hub}`)
  for (const f of plan.files) {
    const state = f.state === 'cached' ? 'in the cache' : f.state === 'partial' ? `${mb(f.partialBytes)} already here, resumed` : 'to download'
    log(`  ${f.name.padEnd(34)} ${mb(f.size).padStart(11)}  ${state}`)
  }
  log(`total ${mb(plan.totalBytes)}; to download ${mb(plan.downloadBytes)}`)
}

function progressPrinter(log: (l: string) => void): (p: HubProgress) => void {
  let last = 0
  let file = ''
  const t0 = Date.now()
  let base = -1
  return (p) => {
    const now = Date.now()
    if (base < 0) base = p.doneBytes
    if (p.file !== file) {
      file = p.file
      last = 0
    }
    const finished = p.fileBytes === p.fileSize
    if (!finished && now - last < 2000) return
    last = now
    const rate = (p.doneBytes - base) / Math.max(0.001, (now - t0) / 1000)
    log(`  ${p.file}: ${((100 * p.fileBytes) / Math.max(1, p.fileSize)).toFixed(0)}% (${mb(p.fileBytes)} of ${mb(p.fileSize)}); all files ${mb(p.doneBytes)} of ${mb(p.totalBytes)}, ${mb(rate)}/s`)
  }
}

function list(cacheDir: string | undefined): number {
  const hubs = cacheDir ? [cacheDir] : hubCacheDirs()
  const models = listCachedModels(process.env, undefined, hubs)
  if (!models.length) {
    process.stdout.write(`no BERT models in ${hubs.join(', ')}\n`)
    return 0
  }
  const w = Math.max(7, ...models.map((m) => m.repoId.length))
  process.stdout.write(`${'repo id'.padEnd(w)}  revision    layers×hidden  ${'size'.padStart(10)}  token-classification head  folder\n`)
  for (const m of models) {
    process.stdout.write(
      `${m.repoId.padEnd(w)}  ${m.revision.slice(0, 10).padEnd(10)}  ${`${m.layers}×${m.hidden}`.padEnd(13)}  ${mb(m.bytes).padStart(10)}  ${(m.tokenClassifier ? 'yes' : 'no (fine-tune it)').padEnd(25)}  ${m.dir}\n`,
    )
  }
  return 0
}

export async function run(argv: string[]): Promise<number> {
  const { rest, repoIds } = splitRepoId(argv)
  return runCommand('get', USAGE, rest, OPTIONS, async (v) => {
    if (v.list) {
      if (repoIds.length || v.out !== undefined || v.revision !== undefined || v['dry-run']) throw new CliError('--list takes only --cache-dir', 2)
      return list(v['cache-dir'])
    }
    if (repoIds.length !== 1) throw new CliError(repoIds.length ? `one REPO_ID at a time (got ${repoIds.join(' ')})` : 'REPO_ID is required (org/name)', 2)
    if (v.force && v.out === undefined) throw new CliError('--force goes with --out', 2)
    if (v.out !== undefined) checkOutputPath(v.out, { flag: '--out', kind: 'checkpoint', replace: v.force, replaceFlag: '--force' })
    const quiet = v.quiet ?? false
    const log = stderrLog(quiet)
    const stop = stopOnCtrlC(log, 'stopping: what has arrived is kept (blobs/*.incomplete); the same command resumes it', { exitOnSecond: true })
    try {
      const r = await getModel({
        repoId: repoIds[0],
        revision: v.revision,
        cacheDir: v['cache-dir'],
        out: v.out,
        dryRun: v['dry-run'],
        signal: stop.signal,
        onPlan: (plan) => describePlan(plan, log),
        onProgress: quiet ? undefined : progressPrinter(log),
        onNote: (line) => log(`note: ${line}`),
      })
      if (!r.offline && !v['dry-run']) log(`${r.downloadedBytes ? `downloaded ${mb(r.downloadedBytes)}` : 'nothing to download'}; the model folder is ${r.dir}${r.out ? ` (copied to ${r.out})` : ''}`)
      writeJsonLine({
        repo_id: r.repoId,
        revision: r.revision,
        commit: r.commit,
        dir: r.dir,
        out: r.out ?? null,
        files: r.files,
        downloaded_bytes: r.downloadedBytes,
        offline: r.offline,
        dry_run: v['dry-run'] ?? false,
        ...(r.plan ? { total_bytes: r.plan.totalBytes, download_bytes: r.plan.downloadBytes } : {}),
      })
      return 0
    } catch (e) {
      if (e instanceof HubError) throw new CliError(e.message, e.kind === 'usage' ? 2 : 1)
      throw e
    } finally {
      stop.release()
    }
  })
}
