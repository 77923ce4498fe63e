/** The status-bar legend of the heatmap: metric and which layer is shown, measured, estimated or compared. */
import type { HeatLayer } from './layers';

/**
 * e.g. "$(flame) busy time · measured · run-42", "$(flame) busy time · estimated" or
 * "$(flame) time · measured − estimated · est/meas 0.82x".
 */
export function legendText(
  metricLabel: string,
  layer: HeatLayer,
  profile: string | null | undefined,
  stale: boolean,
  ratio?: number | null,
): string {
  const where = {
    measured: `measured · ${profile ?? 'profile'}`,
    estimate: 'estimated',
    compare: `measured − estimated${typeof ratio === 'number' ? ` · est/meas ${ratio.toFixed(2)}x` : ''}`,
  }[layer];
  return `$(flame) ${metricLabel} · ${where}${stale ? ' · stale' : ''}`;
}
