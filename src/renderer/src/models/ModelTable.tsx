// The model registry as a table: one row per model with its details on demand, set active, adapt
// to the workspace's documents, delete, and a retrain candidate's way to the decision.
import { Fragment, useState } from 'react'
import type { ModelInfo } from '@shared/ipc'
import { DataTable, type ColumnHead } from '../components/DataTable'
import { distillationMethodText, formatBytes, formatCount, formatDate, pct, teacherNames } from './store'

/** What the Kind column says: where the model came from when that matters more than its kind. */
function kindLabel(m: ModelInfo): string {
  if (m.shipped) return 'shipped'
  if (m.adaptation) return 'adapted'
  return m.kind
}

const COLUMNS: ColumnHead[] = [
  ['Name'], ['Kind'], ['Layers × width', 'num'], ['Parameters', 'num'], ['Size', 'num'], ['Dev F1', 'num'], ['Created'],
  [<span className="visually-hidden">Actions</span>],
]

export function ModelTable(props: {
  models: ModelInfo[]
  busy: boolean
  onSetActive: (m: ModelInfo) => void
  onDelete: (m: ModelInfo) => void
  onOpenRetrain: () => void
  /** "Adapt to my documents" for this model. */
  onAdapt: (m: ModelInfo) => void
}) {
  const [open, setOpen] = useState<number | null>(null)
  const byId = new Map(props.models.map((m) => [m.id, m]))
  return (
    <DataTable name="models-table" testId="models-table" columns={COLUMNS}>
      {props.models.map((m) => {
        const candidate = m.candidate
        const parent = m.parentId !== null ? byId.get(m.parentId) : undefined
        return (
          <Fragment key={m.id}>
            <tr className={`${m.active ? 'is-active' : ''}${candidate ? ' is-candidate' : ''}`} data-model-id={m.id} data-model-name={m.name}>
              <th scope="row">
                <button
                  type="button"
                  className="disclosure"
                  aria-expanded={open === m.id}
                  onClick={() => setOpen(open === m.id ? null : m.id)}
                  title="Details"
                >
                  <span aria-hidden="true">{open === m.id ? '▾' : '▸'}</span>
                  <span className="model-name">{m.name}</span>
                </button>
                {m.active && (
                  <span className="badge badge-active" data-testid="active-badge">
                    Active
                  </span>
                )}
                {candidate && <span className="badge badge-candidate">Candidate</span>}
                {m.shipped && (
                  <span className="badge badge-default" data-testid="default-badge" title="The default model that ships with the app">
                    Default
                  </span>
                )}
              </th>
              <td>
                {/* A copy of the default model is an imported checkpoint the user never chose, an adapted model an
                    encoder to train from: say so rather than the registry kind. */}
                <span className={`kind kind-${kindLabel(m)}`}>{kindLabel(m)}</span>
              </td>
              <td className="num">
                {m.layers} × {m.hidden}
                {m.weights === 'int8' && ' · int8'}
              </td>
              <td className="num">{formatCount(m.parameters)}</td>
              <td className="num">{formatBytes(m.bytes)}</td>
              <td className="num">
                {m.devScores ? (
                  `${pct(m.devScores.f1)}%`
                ) : (
                  <span className="muted" title={m.benchmark ? 'Not measured on this workspace’s documents; its benchmark scores are in its details' : undefined}>
                    –
                  </span>
                )}
              </td>
              <td className="created">{formatDate(m.createdAt)}</td>
              <td className="actions">
                {candidate ? (
                  <button type="button" className="btn small" onClick={props.onOpenRetrain}>
                    Decide…
                  </button>
                ) : !m.active ? (
                  <button type="button" className="btn small" onClick={() => props.onSetActive(m)} disabled={props.busy} data-action="set-active">
                    Set active
                  </button>
                ) : null}
                {!candidate && (
                  <button
                    type="button"
                    className="btn small"
                    onClick={() => props.onAdapt(m)}
                    disabled={props.busy}
                    title={`Adapt ${m.name} to this workspace's documents (continued language-model pretraining)`}
                    aria-label={`Adapt ${m.name} to my documents`}
                    data-action="adapt"
                  >
                    Adapt…
                  </button>
                )}
                <button
                  type="button"
                  className="btn small danger"
                  onClick={() => props.onDelete(m)}
                  disabled={props.busy || candidate}
                  aria-label={`Delete ${m.name}`}
                  data-action="delete"
                >
                  Delete
                </button>
              </td>
            </tr>
            {open === m.id && (
              <tr className="details-row">
                <td colSpan={8}>
                  <dl className="details">
                    <dt>Entity types</dt>
                    <dd>{m.entityTypes.join(', ') || '–'}</dd>
                    {/* A word tagger (BiLSTM) has none: a 0 there read as "no output heads". */}
                    <dt>Attention heads</dt>
                    <dd>{m.heads || '–'}</dd>
                    <dt>Trained on</dt>
                    <dd>{m.trainedOn ?? '–'}</dd>
                    <dt>Training data</dt>
                    <dd>{m.trainingSummary ?? '–'}</dd>
                    {m.distillation && (
                      <>
                        <dt>Distilled from</dt>
                        <dd data-testid="model-teachers">
                          {teacherNames(m.distillation)} ({distillationMethodText(m.distillation)})
                        </dd>
                      </>
                    )}
                    {parent && !m.distillation?.teachers.some((t) => t.id === parent.id) && (
                      <>
                        <dt>{m.adaptation ? 'Adapted from' : m.weights === 'int8' && m.distillation ? 'int8 version of' : 'Trained from'}</dt>
                        <dd>{parent.name}</dd>
                      </>
                    )}
                    {m.adaptation && (
                      <>
                        <dt>Adapted on</dt>
                        <dd>
                          {m.adaptation.documents.toLocaleString('en-US')} documents ({formatCount(m.adaptation.words)} words), {m.adaptation.epochs} epoch
                          {m.adaptation.epochs === 1 ? '' : 's'}
                          {m.adaptation.heldOutAccuracy !== null ? `; held-out masked-word accuracy ${pct(m.adaptation.heldOutAccuracy)}%` : ''}
                        </dd>
                      </>
                    )}
                    {m.devScores && (
                      <>
                        <dt>Dev P / R / F1</dt>
                        <dd>
                          {pct(m.devScores.precision)} / {pct(m.devScores.recall)} / {pct(m.devScores.f1)}
                          {Object.keys(m.devScores.types).length > 1 &&
                            ` — ${Object.entries(m.devScores.types)
                              .map(([t, s]) => `${t} ${pct(s.f1)}`)
                              .join(', ')}`}
                        </dd>
                      </>
                    )}
                    {m.benchmark && (
                      <>
                        <dt>Benchmark F1 ({m.benchmark.split})</dt>
                        <dd data-testid="model-benchmark">
                          {m.benchmark.scores.map((r) => `${r.corpus} ${r.type} ${pct(r.f1)}`).join(' · ')}
                          <span className="muted"> — {m.benchmark.tagging}; public corpora, not this workspace’s documents</span>
                        </dd>
                      </>
                    )}
                    <dt>Folder</dt>
                    <dd>
                      <code className="path">{m.path}</code>
                    </dd>
                  </dl>
                </td>
              </tr>
            )}
          </Fragment>
        )
      })}
    </DataTable>
  )
}
