import { join, resolve } from 'node:path'

export const ROOT = resolve(__dirname, '../..')
export const RENDERER_DIR = join(ROOT, 'out/renderer')
export const FIXTURES = join(ROOT, 'test/fixtures/e2e')
export const SCREENSHOTS = join(ROOT, 'test-results/screenshots')

export { CONTENT_SECURITY_POLICY, META_CONTENT_SECURITY_POLICY } from '@shared/csp'
