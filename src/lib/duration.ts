// Durations in configuration: "30m", "1d", "1500ms". Whole numbers only, so arithmetic stays exact.
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

export function parseDuration(text: string, name: string): number {
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match) throw new Error(`${name}: "${text}" is not a duration like 30m, 12h or 3d`);
  const value = Number(match[1]) * UNIT_MS[match[2]!]!;
  if (value <= 0 || !Number.isSafeInteger(value)) throw new Error(`${name}: "${text}" must be positive`);
  return value;
}

/**
 * A comma-separated list. By default strictly increasing, e.g. RETRY_DELAYS=1d,3d,5d (each counted from the due
 * date); `{ gaps: true }` takes delays each counted from the previous attempt (WEBHOOK_RETRY_DELAYS).
 */
export function parseDurationList(text: string, name: string, options: { gaps?: boolean } = {}): number[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const values = trimmed.split(',').map((part) => parseDuration(part, name));
  for (let i = 1; i < values.length && !options.gaps; i += 1) {
    if (values[i]! <= values[i - 1]!) throw new Error(`${name}: delays must increase (each counts from the due date)`);
  }
  return values;
}
