// The frame of a model view (Models, Retrain, Compression): its heading and introduction, with
// the view's own controls beside them, above the view's content.
import type { ReactNode } from 'react'

interface Props {
  /** The view's class and test id. */
  name: string
  title: string
  intro: ReactNode
  wide?: boolean
  /** Beside the heading (e.g. the view's tabs). */
  aside?: ReactNode
  /** Dialogs the view opens, outside its column. */
  dialogs?: ReactNode
  children: ReactNode
}

export function ViewFrame({ name, title, intro, wide = false, aside, dialogs, children }: Props) {
  return (
    <div className={`view ${name}`} data-testid={name}>
      <div className={`view-inner${wide ? ' wide' : ''}`}>
        <header className="view-head">
          <div>
            <h2>{title}</h2>
            <p className="muted">{intro}</p>
          </div>
          {aside}
        </header>
        {children}
      </div>
      {dialogs}
    </div>
  )
}
