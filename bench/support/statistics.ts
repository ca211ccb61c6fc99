/** The value at percentile `p` (0–100) of values sorted ascending: the nearest rank. */
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The median of `values` (the upper one of an even count), leaving `values` as it was. */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
