// What a job running in the model host gets besides its params (server.ts runs jobs, jobs/
// defines them; both import this instead of each other).

/** What a job gets besides its params. */
export interface JobContext {
  signal: AbortSignal
  progress(data: unknown): void
}
