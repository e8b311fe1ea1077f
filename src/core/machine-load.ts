// How busy the rest of the machine is, for timings that must not be contention: on a shared
// 2-core machine one other multi-threaded job halves a timing or worse (OpenMP and onnxruntime
// threads spin). Linux only (/proc/stat); elsewhere every function says "unknown" (null).
import { readFileSync } from 'node:fs'

/**
 * Busy CPU seconds in a /proc/stat "cpu" line: user + nice + system + irq + softirq. Steal (time
 * the hypervisor gave other machines) and iowait are not this machine's processes' work.
 */
export function busySecondsOfStatLine(line: string, ticksPerSecond = 100): number {
  const f = line.trim().split(/\s+/)
  if (f[0] !== 'cpu' || f.length < 8) throw new Error(`not the total line of /proc/stat: ${line.slice(0, 60)}`)
  const [user, nice, system, , , irq, softirq] = f.slice(1).map(Number)
  return (user + nice + system + irq + softirq) / ticksPerSecond // USER_HZ is 100 on Linux
}

/** Busy CPU seconds of the whole machine since boot, or null where /proc/stat is not readable. */
export function machineBusySeconds(): number | null {
  try {
    return busySecondsOfStatLine(readFileSync('/proc/stat', 'utf8').split('\n')[0])
  } catch {
    return null
  }
}

/** A point to measure other processes' CPU use from (this process's own use is subtracted). */
export interface LoadMark {
  busy: number | null
  cpu: NodeJS.CpuUsage
  at: number
}

export function markLoad(): LoadMark {
  return { busy: machineBusySeconds(), cpu: process.cpuUsage(), at: performance.now() }
}

/** Average CPU cores that other processes used since `mark`, or null where unknown. */
export function otherCoresSince(mark: LoadMark): number | null {
  const busy = machineBusySeconds()
  const cpu = process.cpuUsage(mark.cpu)
  const seconds = (performance.now() - mark.at) / 1000
  if (busy == null || mark.busy == null || seconds <= 0) return null
  return Math.max(0, (busy - mark.busy - (cpu.user + cpu.system) / 1e6) / seconds)
}

/**
 * Blocks (up to maxS seconds) until other processes use under `cores` CPU cores over a 1-second
 * window. Returns the cores last seen, or null where unknown (or maxS ≤ 0). Synchronous, so the
 * benchmarks' synchronous timing loops can use it too.
 */
export function waitQuiet(maxS: number, cores = 0.25): number | null {
  if (maxS <= 0) return null
  const deadline = Date.now() + maxS * 1000
  const sleep = new Int32Array(new SharedArrayBuffer(4))
  let other: number | null = null
  do {
    const mark = markLoad()
    Atomics.wait(sleep, 0, 0, 1000)
    other = otherCoresSince(mark)
    if (other == null || other < cores) return other
  } while (Date.now() < deadline)
  return other
}
