/** One message for the answer of the server's `loadProfile` command (`LoadProfileResult`, server/protocol/commands.py). */
import { formatNs } from './heat/format';
import type { LoadProfileResult } from './protocol.generated';

export function profileLoadSummary(response: unknown): string {
  // Tolerant of an older or failing server: every field is checked before it is used.
  const r = (typeof response === 'object' && response !== null ? response : {}) as Partial<
    Record<keyof LoadProfileResult, unknown>
  >;
  const files = Array.isArray(r.files) ? r.files.length : 0;
  const parts = [
    `profile loaded${typeof r.format === 'string' ? ` (${r.format})` : ''}: heat on ${files} file${files === 1 ? '' : 's'}`,
  ];
  // What the latency was taken from (e.g. Summary.total_exec_time) is a technical detail: the kernel panel's
  // detail line and the heat hover name it, the message keeps to plain words.
  if (typeof r.latency_ns === 'number') parts.push(`kernel ${formatNs(r.latency_ns)}`);
  if (typeof r.unattributed_instr === 'number' && r.unattributed_instr > 0)
    parts.push(`${r.unattributed_instr} instructions without a source line`);
  const unmapped = Array.isArray(r.unmapped_files) ? r.unmapped_files : [];
  if (unmapped.length) {
    const names = unmapped.map((u: unknown) => {
      const recorded = typeof u === 'object' && u !== null ? (u as Record<string, unknown>).recorded : u;
      return typeof recorded === 'string' ? recorded : '?';
    });
    parts.push(
      `not found in the workspace: ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''} (see nki-studio.pathMappings)`,
    );
  }
  return parts.join(' · ');
}
