// Which engine trains and which tags on this computer, and why (the model host's choice).
import type { EngineInfo } from '@shared/ipc'
import { deviceClass } from './store'

const DEVICE_LABEL = { gpu: 'GPU', cpu: 'CPU', wasm: 'WASM' } as const

/** GPU / CPU / WASM, from an engine or backend name (the full name in the tooltip). */
export function DeviceBadge({ name }: { name: string }) {
  const d = deviceClass(name)
  return (
    <span className={`device device-${d}`} title={name}>
      {DEVICE_LABEL[d]}
    </span>
  )
}

/** One engine: what it is for, its name and device, and why the host chose it. */
function EngineItem({ label, name, reason, testId }: { label: string; name: string; reason: string; testId: string }) {
  return (
    <div className="engine-item">
      <span className="section-label">{label}</span>
      <div className="engine-name">
        <DeviceBadge name={name} />
        <code data-testid={testId}>{name}</code>
      </div>
      <p className="engine-reason">{reason}</p>
    </div>
  )
}

export function EngineCard({ engine }: { engine: EngineInfo | null }) {
  return (
    <section className="card engine" aria-labelledby="engine-title" data-testid="engine-card">
      <div className="card-head">
        <h3 id="engine-title">Engine on this computer</h3>
      </div>
      {engine ? (
        <div className="engine-grid">
          <EngineItem label="Training" name={engine.trainingBackend} reason={engine.trainingBackendReason} testId="training-backend" />
          <EngineItem label="Tagging (inference)" name={engine.inferenceEngine} reason={engine.inferenceEngineReason} testId="inference-engine" />
        </div>
      ) : (
        <p className="muted">Asking the model host…</p>
      )}
    </section>
  )
}

