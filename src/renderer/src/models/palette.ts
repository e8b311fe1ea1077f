// Chart colours, apart from Chart.tsx so that the pure chart configurations (chart-lines.ts) and
// their unit tests need neither React nor a canvas.

/** Series colours: the accent first, then colour-blind-safe companions (Okabe–Ito based). */
export const SERIES = ['#1d5fa8', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#6b7280', '#8a4b1f']
/** For "published" reference marks: neutral, never mistaken for our own measurements. */
export const REFERENCE = '#8a939c'
