// What every state writer shares (payment.state.ts, subscription.state.ts): a move is a conditional update on the
// states it may leave; when it changed nothing, the entity was in another state (or is gone), and that is a
// STATE_CONFLICT naming the state it is in, so two writers can never both apply one move.
import { StateConflictError } from '../../lib/errors.ts';

export interface Move<S extends string> {
  from: readonly S[];
  to: S;
}

export async function applyMove<S extends string>(
  entity: string,
  transition: string,
  move: Move<S>,
  update: (from: S[], to: S) => Promise<{ count: number }>,
  current: () => Promise<{ status: string } | null>,
): Promise<void> {
  const moved = await update([...move.from], move.to);
  if (moved.count > 0) return;
  const found = await current();
  throw new StateConflictError(`${entity} cannot ${transition} from ${found?.status ?? 'a missing state'}`);
}
