/**
 * A cache of at most `max` entries: the oldest entry goes when full. With `ttlMs`, an entry is also
 * forgotten that long after it was set; entries share one ttl, so the oldest are the first to
 * expire and a full cache drops the expired ones before any live one (never the whole cache).
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  constructor(
    private readonly max: number,
    private readonly ttlMs = Infinity,
    private readonly now: () => number = Date.now,
  ) {}
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }
  set(key: string, value: V): void {
    this.entries.delete(key);
    const now = this.now();
    for (const [oldest, entry] of this.entries) {
      if (entry.expiresAt > now && this.entries.size < this.max) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
  }
  get size(): number {
    return this.entries.size;
  }
  clear(): void {
    this.entries.clear();
  }
}
