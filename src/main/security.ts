// Security policy applied to every session and web contents: no remote content, no navigation,
// no new windows, no permissions. Electron's own checklist, enforced in one place.
import { app, session, type WebContents } from 'electron'

import { CONTENT_SECURITY_POLICY } from '@shared/csp'

export function isAppUrl(url: string, rendererUrl: string): boolean {
  try {
    const target = new URL(url)
    const app = new URL(rendererUrl)
    if (app.protocol === 'file:') return target.protocol === 'file:' && target.pathname === app.pathname
    return target.origin === app.origin
  } catch {
    return false
  }
}

export function hardenSession(rendererUrl: string): void {
  const ses = session.defaultSession
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false))
  ses.setPermissionCheckHandler(() => false)
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] },
    })
  })
  // Only our own bundle (file:// in production, the dev server in development) may load.
  ses.webRequest.onBeforeRequest((details, callback) => {
    const url = details.url
    const allowed =
      url.startsWith('file://') ||
      url.startsWith('devtools://') ||
      url.startsWith('data:') ||
      (!rendererUrl.startsWith('file:') && url.startsWith(new URL(rendererUrl).origin))
    callback({ cancel: !allowed })
  })
}

export function hardenWebContents(contents: WebContents, rendererUrl: string): void {
  contents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url, rendererUrl)) event.preventDefault()
  })
  contents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url, rendererUrl)) event.preventDefault()
  })
  contents.on('will-attach-webview', (event) => event.preventDefault())
  contents.setWindowOpenHandler(() => ({ action: 'deny' }))
}

export function installGlobalGuards(getRendererUrl: () => string): void {
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, getRendererUrl()))
}
