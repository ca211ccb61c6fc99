/**
 * Gathers the keys submitted by concurrent callers for a moment and hands them to `run` together:
 * N jobs of a queue become one round of database work instead of N. A batch starts when `maxSize`
 * keys wait or `lingerMs` after its first key, whichever comes first; several batches may run at
 * once. A key submitted twice while it waits joins the same batch and gets the same outcome.
 *
 * `run` answers per key: a key it leaves out of the map, or maps to undefined, succeeded; one it maps
 * to an error fails with that error alone. Should `run` throw, every key of the batch fails with it.
 */
export interface MicroBatcher<K> {
  submit: (key: K) => Promise<void>;
}

export type BatchOutcomes<K> = Map<K, Error | undefined>;

export function createMicroBatcher<K>(
  run: (keys: K[]) => Promise<BatchOutcomes<K>>,
  options: { maxSize: number; lingerMs: number },
): MicroBatcher<K> {
  let waiting = new Map<K, Array<{ resolve: () => void; reject: (err: unknown) => void }>>();
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = waiting;
    waiting = new Map();
    if (!batch.size) return;
    run([...batch.keys()]).then(
      (outcomes) => {
        for (const [key, callers] of batch) {
          const err = outcomes.get(key);
          for (const c of callers) {
            if (err) c.reject(err);
            else c.resolve();
          }
        }
      },
      (err: unknown) => {
        for (const callers of batch.values()) for (const c of callers) c.reject(err);
      },
    );
  };

  return {
    submit: (key) =>
      new Promise<void>((resolve, reject) => {
        const callers = waiting.get(key);
        if (callers) callers.push({ resolve, reject });
        else waiting.set(key, [{ resolve, reject }]);
        if (waiting.size >= options.maxSize) flush();
        else timer ??= setTimeout(flush, options.lingerMs);
      }),
  };
}

/**
 * The keys of a batch whose run failed as a whole, run again one by one with `runOne`, so that a key
 * the batch could not take fails its own caller only: an outcome for each key, its own error or none.
 */
export async function runEachAlone<K>(keys: readonly K[], runOne: (key: K) => Promise<unknown>): Promise<BatchOutcomes<K>> {
  const outcomes: BatchOutcomes<K> = new Map();
  for (const key of keys) {
    await runOne(key).then(
      () => outcomes.set(key, undefined),
      (err: unknown) => outcomes.set(key, err instanceof Error ? err : new Error(String(err))),
    );
  }
  return outcomes;
}
