/** One figure of a benchmark. */
export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

/** What a `bench/<area>.bench.ts` module's `run()` returns. */
export interface BenchReport {
  title: string;
  rows: BenchRow[];
}

/** Median of a list of numbers (the list is sorted in place). */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile of a list of numbers (the list is sorted in place). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  const rank = Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1));
  return values[rank]!;
}
