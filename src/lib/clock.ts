// The current time always comes from an injected clock (docs/architecture.md "House style"). A simulated clock follows the system
// time until it is set; once set it stays frozen until set again, like a test clock, so scenario tests and
// operators see repeatable time.
export interface Clock {
  now(): Date;
  readonly kind: 'system' | 'simulated';
}

export interface SimulatedClock extends Clock {
  readonly kind: 'simulated';
  set(instant: Date): void;
  advance(ms: number): Date;
  /** True once set: time no longer moves by itself. */
  readonly frozen: boolean;
}

export function createSystemClock(): Clock {
  return { kind: 'system', now: () => new Date() };
}

export function createSimulatedClock(start?: Date): SimulatedClock {
  let current: number | undefined = start?.getTime();
  return {
    kind: 'simulated',
    now: () => new Date(current ?? Date.now()),
    set(instant) {
      if (Number.isNaN(instant.getTime())) throw new Error('invalid instant');
      current = instant.getTime();
    },
    advance(ms) {
      current = (current ?? Date.now()) + ms;
      return new Date(current);
    },
    get frozen() {
      return current !== undefined;
    },
  };
}

export function isSimulated(clock: Clock): clock is SimulatedClock {
  return clock.kind === 'simulated';
}
