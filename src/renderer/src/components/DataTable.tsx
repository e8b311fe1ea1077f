// A data table in its scrolling wrapper: a heading row from a list of columns, then the rows.
import type { ReactNode } from 'react'

/** A column's heading and its class ('num': right-aligned over figures). */
export type ColumnHead = [label: ReactNode, className?: string]

interface Props {
  /** The table's own class, beside 'data-table'. */
  name: string
  testId: string
  columns: ColumnHead[]
  /** Read out, not shown: what the table lists. */
  caption?: string
  /** A wrapper that scrolls on its own (in a dialog): focusable, and a region by this name, so keys scroll it. */
  region?: { label: string; className: string }
  /** The rows (<tr>). */
  children: ReactNode
}

export function DataTable({ name, testId, columns, caption, region, children }: Props) {
  return (
    <div className={region ? `table-wrap ${region.className}` : 'table-wrap'} {...(region ? { tabIndex: 0, role: 'region', 'aria-label': region.label } : {})}>
      <table className={`data-table ${name}`} data-testid={testId}>
        {caption && <caption className="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {columns.map(([label, className], i) => (
              <th key={i} scope="col" className={className}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}
