/** A Server-Sent Events client over fetch, for tests and benches: frames as they arrive, with their arrival time. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
  receivedAt: number;
}

export interface SseStream {
  status: number;
  frames: SseFrame[];
  /** The event frames (those with an id). */
  events: () => SseFrame[];
  /** Resolves once `count` event frames arrived (rejects after `timeoutMs`). */
  waitForEvents: (count: number, timeoutMs?: number) => Promise<SseFrame[]>;
  waitFor: (predicate: (frames: SseFrame[]) => boolean, timeoutMs?: number) => Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close: () => void;
}

export async function openSse(url: string, key: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: SseFrame = { receivedAt: Date.now() };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else {
              const colon = line.indexOf(':');
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id' || field === 'event' || field === 'data') frame[field] = value;
            }
          }
          frames.push(frame);
        }
        for (const wake of waiters) wake();
      }
    } catch {
      // aborted by close()
    }
    for (const wake of waiters) wake();
  })();
  const events = () => frames.filter((f) => f.id !== undefined);
  let done = false;
  void ended.then(() => (done = true));
  const waitFor = (predicate: (frames: SseFrame[]) => boolean, timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (predicate(frames)) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        } else if (done) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`stream ended with ${events().length} events`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out with ${events().length} events`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    status: res.status,
    frames,
    events,
    waitForEvents: async (count, timeoutMs) => {
      await waitFor(() => events().length >= count, timeoutMs);
      return events();
    },
    waitFor,
    ended,
    close: () => controller.abort(),
  };
}
