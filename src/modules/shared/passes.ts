// The passes of a background job in flight in this process (the charging pass, the inquiry pass), so that a graceful
// stop can wait for them: one rule for every pass the scheduler drains (src/plugins/scheduler.ts).

export function createPassTracker() {
  const passes = new Set<Promise<unknown>>();
  return {
    /** Runs `pass` as one in flight until it settles. */
    async track<T>(pass: Promise<T>): Promise<T> {
      passes.add(pass);
      try {
        return await pass;
      } finally {
        passes.delete(pass);
      }
    },
    /** Resolves once no pass is in flight (at once when none is). */
    async idle(): Promise<void> {
      while (passes.size > 0) await Promise.allSettled([...passes]);
    },
    /** Waits for the passes in flight, at most `timeoutMs`: true when none is left. */
    async drain(timeoutMs: number): Promise<boolean> {
      if (passes.size === 0) return true;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const drained = Promise.allSettled([...passes]).then(() => true as const);
      const finished = await Promise.race([drained, timedOut]);
      clearTimeout(timer);
      return finished;
    },
  };
}
