// The comparison results as a table: accuracy, size, speed, and the reductions against the
// reference beside FastBioNER's published figures for a student of the same depth.
import type { ComparisonReport, ComparisonRow } from '@shared/ipc'
import { PUBLISHED_FASTBIONER } from '@shared/published'
import { DataTable, type ColumnHead } from '../components/DataTable'
import { DeviceBadge } from './EngineCard'
import { distillationMethodText, formatBytes, formatCount, formatDate, pct, teacherNames } from './store'

const COLUMNS: ColumnHead[] = [
  ['Model'], ['Layers', 'num'], ['Params', 'num'], ['Size', 'num'], ['P', 'num'], ['R', 'num'], ['F1', 'num'], ['ms / doc', 'num'], ['Tokens / s', 'num'], ['Engine'],
  // Against the reference (the first model):
  ['F1 kept', 'num group-start'], ['Size −', 'num'], ['Time −', 'num'],
]

const publishedFor = (layers: number) => PUBLISHED_FASTBIONER.rows.find((r) => r.layers === layers)

export function ComparisonTable({ report }: { report: ComparisonReport }) {
  const rows = report.rows
  const teacher = rows[0]
  const engines = [...new Set(rows.map((r) => r.engine))]
  return (
    <section className="card" aria-labelledby="cmp-table-title" data-testid="comparison">
      <div className="card-head">
        <h3 id="cmp-table-title">Results</h3>
        <span className="muted" data-testid="comparison-meta">
          {report.documents} documents · {report.machine} · {formatDate(report.measuredAt)}
        </span>
      </div>
      <DataTable name="compare-table" testId="comparison-table" columns={COLUMNS}>
        {rows.map((r, i) => (
          <CompareRow key={r.modelId} row={r} isTeacher={i === 0} />
        ))}
      </DataTable>
      <p className="muted small-print">
        P, R, F1 in %, entity level. “F1 kept”, “Size −” and “Time −” are relative to {teacher?.name ?? 'the first model'} (the reference); under each,{' '}
        <span className="published-inline">grey</span>: FastBioNER's published figure for a student of that depth ({PUBLISHED_FASTBIONER.teacherLayers}-layer
        BioBERT teacher). Measured with {engines.join(', ')}.
      </p>
    </section>
  )
}

function CompareRow({ row: r, isTeacher }: { row: ComparisonRow; isTeacher: boolean }) {
  const pub = isTeacher ? undefined : publishedFor(r.layers)
  const rel = (ours: number, published: number | undefined, sign: '' | '−') => (
    <>
      {/* A negative reduction is a gain: "+16.8 %", not "−-16.8 %". */}
      <span className="ours">{isTeacher ? '—' : sign && ours < 0 ? `+${pct(-ours)} %` : `${sign}${pct(ours)} %`}</span>
      {pub && published !== undefined && (
        <span className="published" title={`FastBioNER, ${r.layers} layers, as published`}>
          pub. {sign}
          {pct(published)} %
        </span>
      )}
    </>
  )
  return (
    <tr data-model-id={r.modelId} className={isTeacher ? 'is-reference' : ''}>
      <th scope="row">
        {r.name}
        {isTeacher && <span className="badge">reference</span>}
        {r.distillation && (
          <span className="learnt-from" data-testid="learnt-from">
            from {teacherNames(r.distillation)} · {distillationMethodText(r.distillation)}
          </span>
        )}
      </th>
      <td className="num">
        {r.layers}
        {r.weights === 'int8' && ' · int8'}
      </td>
      <td className="num">{formatCount(r.parameters)}</td>
      <td className="num">{formatBytes(r.bytes)}</td>
      <td className="num">{pct(r.overall.precision)}</td>
      <td className="num">{pct(r.overall.recall)}</td>
      <td className="num strong">{pct(r.overall.f1)}</td>
      <td className="num">{r.medianMsPerDocument.toFixed(1)}</td>
      <td className="num">{Math.round(r.tokensPerSecond).toLocaleString('en-US')}</td>
      <td title={r.engineReason}>
        <span className="engine-cell">
          <DeviceBadge name={r.engine} />
          <code>{r.engine}</code>
        </span>
      </td>
      <td className="num group-start rel">{rel(r.f1Retention, pub?.f1Retention, '')}</td>
      <td className="num rel">{rel(r.sizeReduction, pub?.sizeReduction, '−')}</td>
      <td className="num rel">{rel(r.timeReduction, pub?.timeReduction, '−')}</td>
    </tr>
  )
}
