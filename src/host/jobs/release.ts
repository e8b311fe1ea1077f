// The release job: closes the cached taggers (of one folder, or all of them).
import type { Job } from './common'
import { releaseTaggers } from './taggers'

export const release: Job<'release'> = async ({ dir }) => ({ released: await releaseTaggers(dir) })
