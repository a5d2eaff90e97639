// With noUncheckedIndexedAccess every `xs[i]` may be undefined. Most sites handle that with a
// loop or a guard; these two are for the few where the value is present by construction (an index
// from the same array's own scan, a regex group that is not optional, a key set a moment ago) but
// the compiler cannot see it. They fail loudly, naming what was missing, where a `!` would have let
// undefined run on into a wrong answer further away.

/** A broken internal invariant: a bug in this code, never a bad input. */
export class InvariantError extends Error {
  constructor(detail: string) {
    super(`internal invariant broken: ${detail}`);
    this.name = 'InvariantError';
  }
}

/** `xs[i]`, which the caller knows is in range; `what` names it in the error when it is not. */
export function itemAt<T>(xs: ArrayLike<T>, i: number, what: string): T {
  const x = xs[i];
  if (x === undefined) throw new InvariantError(`${what}: no element at index ${i} of ${xs.length}`);
  return x;
}

/** A value the caller knows is set; `what` names it in the error when it is not. */
export function present<T>(x: T | undefined | null, what: string): T {
  if (x === undefined || x === null) throw new InvariantError(`${what} is missing`);
  return x;
}
