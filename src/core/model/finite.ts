// Weights from a model folder are untrusted: a NaN or an infinity in one tensor makes every
// score NaN, and tagging then finds nothing without a word. Each reader that turns stored weights
// into numbers checks them with this and names the file and tensor.

/** What is wrong with `data` ("holds NaN at element 12 of 4096"), or null when every value is finite. */
export function nonFiniteProblem(data: ArrayLike<number>): string | null {
  for (let i = 0; i < data.length; i++) {
    const x = data[i]!
    // x - x is 0 for every finite x, NaN for NaN and ±Infinity: one comparison per value.
    if (x - x !== 0) return `holds ${x} at element ${i} of ${data.length}`
  }
  return null
}
