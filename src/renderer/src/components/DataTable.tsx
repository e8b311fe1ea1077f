// A data table in its scrolling wrapper: a heading row from a list of columns, then the rows.
import type { ReactNode } from 'react'

/** A column's heading and its class ('num': right-aligned over figures). */
export type ColumnHead = [label: ReactNode, className?: string]

interface Props {
  /** The table's own class, beside 'data-table'. */
  name: string
  testId: string
  columns: ColumnHead[]
  /** The rows (<tr>). */
  children: ReactNode
}

export function DataTable({ name, testId, columns, children }: Props) {
  return (
    <div className="table-wrap">
      <table className={`data-table ${name}`} data-testid={testId}>
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
