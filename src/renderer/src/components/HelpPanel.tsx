import { Modal } from './Modal'

interface Props {
  onClose: () => void
  legend: string[]
}

const K = ({ k }: { k: string }) => (
  <>
    {k.split('+').map((part, i) => (
      <span key={i}>
        {i > 0 && '+'}
        <kbd>{part}</kbd>
      </span>
    ))}
  </>
)

const GROUPS: Array<{ title: string; rows: Array<[string[], string]> }> = [
  {
    title: 'Annotating — cursor in the text',
    rows: [
      [['Shift+←', 'Ctrl+Shift+→'], 'Select characters or words; a selection always grows to whole tokens'],
      [['1 … 9'], 'Give the selection the type on that key (see the legend); with the cursor in an entity, change its type'],
      [['Enter'], 'Open the type menu for the selection, or the details of the entity under the cursor'],
      [['Delete', 'Backspace'], 'Delete the entity under the cursor'],
      [['Alt+Shift+←', 'Alt+Shift+→'], 'Extend the entity by one token at its start / end'],
      [['Alt+Shift+↓', 'Alt+Shift+↑'], 'Shrink the entity by one token at its start / end'],
      [['Ctrl+Z'], 'Undo (saved at once, like every change)'],
      [['Ctrl+Shift+Z', 'Ctrl+Y'], 'Redo'],
      [['Esc'], 'Close the menu or details, or clear the selection'],
    ],
  },
  {
    title: 'Model suggestions (dashed) — cursor in the text',
    rows: [
      [['a'], 'Accept the suggestion under the cursor (then on to the next one)'],
      [['r', 'Delete'], 'Reject the suggestion under the cursor'],
      [['n', 'p'], 'Next / previous suggestion'],
      [['1 … 9'], 'Retype a suggestion: a corrected suggestion counts as accepted'],
      [['Ctrl+Z'], 'Undo an accept or reject like any other change'],
    ],
  },
  {
    title: 'Reviewing',
    rows: [
      [['Ctrl+Enter'], 'Mark the document done (press again to reopen it)'],
      [['Ctrl+Shift+Enter'], 'Mark done and open the next unreviewed document'],
      [['Alt+↓', 'Alt+↑'], 'Next / previous unreviewed document'],
      [['j', 'k'], 'The same, when the text does not have the focus'],
    ],
  },
  {
    title: 'Moving around',
    rows: [
      [['Ctrl+1 … 4'], 'Documents, Models, Retrain, Compression'],
      [['/'], 'Search documents'],
      [['e'], 'Move the focus into the document text'],
      [['↑', '↓'], 'In the document list: move; Enter opens'],
      [['x'], 'In the document list: select the document for tagging (Ctrl+click too)'],
      [['Delete'], 'In the document list: delete the selected documents, or the active one (asks first; Undo follows)'],
      [['Tab'], 'Next control (the focus is always outlined)'],
      [['?'], 'Show or hide this help'],
    ],
  },
]

export function HelpPanel({ onClose, legend }: Props) {
  return (
    <Modal title="Keyboard shortcuts" onClose={onClose} className="help" testId="help-panel">
      <p className="muted">
        On macOS use ⌘ for Ctrl. The text itself is read-only: only entities change, and every change is saved to the workspace at once.
      </p>
      <div className="help-grid">
        {GROUPS.map((g) => (
          <section key={g.title}>
            <h3>{g.title}</h3>
            <table className="shortcuts">
              <tbody>
                {g.rows.map(([keys, what]) => (
                  <tr key={what}>
                    <th scope="row">
                      {keys.map((k) => (
                        <span key={k} className="keycombo">
                          <K k={k} />
                        </span>
                      ))}
                    </th>
                    <td>{what}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        ))}
        <section>
          <h3>Type keys</h3>
          <table className="shortcuts">
            <tbody>
              {legend.slice(0, 9).map((t, i) => (
                <tr key={t}>
                  <th scope="row">
                    <kbd>{i + 1}</kbd>
                  </th>
                  <td>{t}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
    </Modal>
  )
}
