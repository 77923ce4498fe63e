/** The status-bar legend of the heatmap: metric and where the data came from, measured or estimated. */
import type { HeatSource } from './model';

/** e.g. "$(flame) busy time · measured · run-42" or "$(flame) busy time · estimated". */
export function legendText(
  metricLabel: string,
  source: HeatSource,
  profile: string | null | undefined,
  stale: boolean,
): string {
  const where = source === 'measured' ? `measured · ${profile ?? 'profile'}` : 'estimated';
  return `$(flame) ${metricLabel} · ${where}${stale ? ' · stale' : ''}`;
}
