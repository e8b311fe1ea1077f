// The workspace's settings: one JSON value per key (the settings table), typed by WorkspaceSettings.
import type { Connection } from './connection'
import { now } from './rows'
import type { WorkspaceSettings } from './types'

export function getSetting<K extends keyof WorkspaceSettings>(c: Connection, key: K): WorkspaceSettings[K] | null {
  c.assertOpen()
  const row = c.stmt('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined
  return row ? (JSON.parse(row.value) as WorkspaceSettings[K]) : null
}

export function setSetting<K extends keyof WorkspaceSettings>(c: Connection, key: K, value: WorkspaceSettings[K]): void {
  c.write(() => {
    c.stmt(
      `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    ).run(key, JSON.stringify(value), now())
  })
}
