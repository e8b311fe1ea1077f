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
export function EngineCard({ engine }: { engine: EngineInfo | null }) {
  return (
    <section className="card engine" aria-labelledby="engine-title" data-testid="engine-card">
      <div className="card-head">
        <h3 id="engine-title">Engine on this computer</h3>
      </div>
      {engine ? (
        <div className="engine-grid">
          <div className="engine-item">
            <span className="section-label">Training</span>
            <div className="engine-name">
              <DeviceBadge name={engine.trainingBackend} />
              <code data-testid="training-backend">{engine.trainingBackend}</code>
            </div>
            <p className="engine-reason">{engine.trainingBackendReason}</p>
          </div>
          <div className="engine-item">
            <span className="section-label">Tagging (inference)</span>
            <div className="engine-name">
              <DeviceBadge name={engine.inferenceEngine} />
              <code data-testid="inference-engine">{engine.inferenceEngine}</code>
            </div>
            <p className="engine-reason">{engine.inferenceEngineReason}</p>
          </div>
        </div>
      ) : (
        <p className="muted">Asking the model host…</p>
      )}
    </section>
  )
}

