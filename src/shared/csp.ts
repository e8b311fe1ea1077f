// The renderer's Content-Security-Policy: sent as a header by Electron's session (and the e2e
// server) and mirrored by the <meta> tag in src/renderer/index.html for file:// loads.
const DIRECTIVES = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
]

export const CONTENT_SECURITY_POLICY = DIRECTIVES.join('; ')

/** A <meta> CSP cannot carry frame-ancestors (Chromium ignores it with a warning). */
export const META_CONTENT_SECURITY_POLICY = DIRECTIVES.filter((d) => !d.startsWith('frame-ancestors')).join('; ')
