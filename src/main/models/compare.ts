// compare:run: accuracy, size and speed of models on the same gold documents.
import type { ComparisonReport, ComparisonRow } from '@shared/ipc'
import { StoreError } from '../../core/store'
import type { Handlers } from '../handlers'
import { pickScores, type ModelRuntime } from './runtime'

export function compareHandlers(rt: ModelRuntime): Pick<Handlers, 'compare:run'> {
  const { ctx, host, workspace, begin, progressEmitter, finishRun, abandonJob } = rt
  return {
    async 'compare:run'(req): Promise<ComparisonReport> {
      const ws = workspace()
      const models = req.modelIds.map((id) => ws.getModel(id))
      const notReady = models.filter((m) => m.status === 'training')
      if (notReady.length) throw new StoreError('conflict', `Still being trained: ${notReady.map((m) => m.name).join(', ')}`)
      let gold = req.documentIds ? ws.labelledDocumentsById(req.documentIds) : ws.labelledDocuments({ statuses: ['done'], includeGold: false })
      if (!req.documentIds && gold.length === 0) gold = ws.labelledDocuments({ statuses: [], includeGold: true })
      if (gold.length === 0) throw new StoreError('invalid_request', 'No gold documents: mark reviewed documents done (or import annotated ones) first')
      const { signal, job, end } = begin(req.jobId, 'training', 'A model comparison')
      for (const m of models) job.models.add(m.id)
      const runId = (job.runId = ws.startRun('compare', models[0].id, { modelIds: req.modelIds, documents: gold.length }))
      const emit = progressEmitter(req.jobId, 'Comparison')
      try {
        // compareModels has no cancel hook: a cancel stops the host process after 2 s.
        const r = await host().request(
          'compare',
          { dirs: models.map((m) => m.path), names: models.map((m) => m.name), gold },
          { signal, onProgress: emit, cancelGraceMs: 2000 },
        )
        emit.flush()
        const rows: ComparisonRow[] = r.models.map((m, i) => ({
          modelId: models[i].id,
          name: models[i].name,
          distillation: models[i].distillation,
          layers: m.layers,
          weights: m.weights,
          parameters: m.parameters,
          bytes: m.bytes,
          overall: { precision: m.precision, recall: m.recall, f1: m.f1 },
          types: Object.fromEntries(Object.entries(m.types).map(([t, s]) => [t, pickScores(s)])),
          medianMsPerDocument: m.latency.medianMs,
          tokensPerSecond: m.tokensPerSecond,
          engine: m.engine,
          engineReason: m.engineReason,
          f1Retention: m.relative ? m.relative.f1Retention : 1,
          sizeReduction: m.relative ? m.relative.sizeReduction : 0,
          timeReduction: m.relative ? m.relative.timeReduction : 0,
        }))
        const report: ComparisonReport = {
          rows,
          documents: r.goldDocuments,
          measuredAt: r.createdAt,
          machine: `${r.host.cpus} CPU${r.host.cpus === 1 ? '' : 's'}, ${r.host.platform}/${r.host.arch}, Node ${r.host.node}`,
        }
        ctx.emit('job:progress', { jobId: req.jobId, done: 1, total: 1, message: 'Comparison finished' })
        finishRun(ws, runId, 'done', { rows: rows.map((x) => ({ modelId: x.modelId, f1: x.overall.f1, ms: x.medianMsPerDocument, engine: x.engine })) })
        return report
      } catch (e) {
        await abandonJob(ws, runId, null, e)
        throw e
      } finally {
        end()
      }
    },
  }
}
