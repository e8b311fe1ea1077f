// Chart.js on a <canvas>: it draws pixels, so the strict CSP (no inline <style>, no eval) holds;
// Chart.js only sets the canvas's size through CSSOM, which the CSP allows. Animations are off:
// a live curve redraws several times a second and a clinician should not watch bars grow.
import { useEffect, useRef } from 'react'
import {
  BarController,
  BarElement,
  BubbleController,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
  type ChartConfiguration,
  type ChartType,
} from 'chart.js'

Chart.register(
  BarController,
  BarElement,
  BubbleController,
  CategoryScale,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
)

let themed = false

/** Fonts and colours from app.css, read once (a canvas cannot use CSS variables). */
function theme(): void {
  if (themed) return
  themed = true
  const css = getComputedStyle(document.documentElement)
  Chart.defaults.font.family = css.fontFamily || 'system-ui, sans-serif'
  Chart.defaults.font.size = 12.5
  Chart.defaults.color = css.getPropertyValue('--muted').trim() || '#56606b'
  Chart.defaults.borderColor = '#e3e6e9'
  Chart.defaults.animation = false
  Chart.defaults.maintainAspectRatio = false
  Chart.defaults.plugins.legend.labels.boxWidth = 12
  Chart.defaults.plugins.legend.labels.boxHeight = 12
  Chart.defaults.plugins.tooltip.backgroundColor = 'rgba(27, 31, 36, 0.92)'
  Chart.defaults.plugins.tooltip.padding = 8
}

interface Props<T extends ChartType> {
  config: ChartConfiguration<T>
  /** What the chart shows, for screen readers (the numbers are in a table nearby). */
  label: string
  className?: string
  testId?: string
}

export function ChartCanvas<T extends ChartType>({ config, label, className, testId }: Props<T>) {
  const canvasRef = useRef<HTMLCanvasElement | null>(null)
  const chartRef = useRef<Chart<T> | null>(null)

  useEffect(() => {
    theme()
    const canvas = canvasRef.current
    if (!canvas) return
    const chart = new Chart<T>(canvas, config)
    chartRef.current = chart
    return () => {
      chart.destroy()
      chartRef.current = null
    }
    // Created once; later configs update it in place (below).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [config.type])

  useEffect(() => {
    const chart = chartRef.current
    if (!chart) return
    chart.data = config.data
    if (config.options) chart.options = config.options
    chart.update('none')
  }, [config])

  return (
    <div className={`chart ${className ?? ''}`} data-testid={testId}>
      <canvas ref={canvasRef} role="img" aria-label={label} />
    </div>
  )
}
