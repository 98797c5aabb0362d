import { readFileSync } from 'node:fs';

// The figures a bench reports: CPU time from /proc, medians and percentiles.

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times, is 100 on every architecture Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, in microseconds) a process has used so far, from /proc: divided by the
 * requests it served, what one request costs that server, whatever the load generator did.
 */
export function processCpuMicros(pid: number): number {
  // proc(5): utime and stime are fields 14 and 15, counted after the command name, which is in
  // parentheses and may itself hold ") ".
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
