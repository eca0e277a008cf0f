// The current time always comes from an injected clock (DESIGN.md §7). A simulated clock stays frozen until
// it is set again, like a test clock, so scenario tests and operators see repeatable time.
export interface Clock {
  now(): Date;
  readonly kind: 'system' | 'simulated';
}

export interface SimulatedClock extends Clock {
  readonly kind: 'simulated';
  set(instant: Date): void;
  advance(ms: number): Date;
}

export function createSystemClock(): Clock {
  return { kind: 'system', now: () => new Date() };
}

export function createSimulatedClock(start: Date = new Date()): SimulatedClock {
  let current = start.getTime();
  return {
    kind: 'simulated',
    now: () => new Date(current),
    set(instant) {
      if (Number.isNaN(instant.getTime())) throw new Error('invalid instant');
      current = instant.getTime();
    },
    advance(ms) {
      current += ms;
      return new Date(current);
    },
  };
}

export function isSimulated(clock: Clock): clock is SimulatedClock {
  return clock.kind === 'simulated';
}
