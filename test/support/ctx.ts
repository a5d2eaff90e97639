// Builds a component Ctx over in-memory state for unit tests.
import {
  BufferedStash,
  SnapshotSessionView,
  emptySnapshot,
  type CacheView,
  type Ctx,
  type Dialect,
  type SessionSnapshot,
} from '@context-guru/components';

export interface TestCtxOptions {
  cache?: Partial<CacheView>;
  snapshot?: Partial<SessionSnapshot>;
  provider?: Dialect;
  persistent?: boolean;
  now?: number;
  existingBreakpoints?: number;
  session?: string;
}

export type TestCtx = Ctx & { stash: BufferedStash; state: SnapshotSessionView };

export function testCtx(o: TestCtxOptions = {}): TestCtx {
  const snap = { ...emptySnapshot(), ...(o.snapshot ?? {}) };
  return {
    tenant: 'test',
    session: o.session ?? 'sess-1',
    provider: o.provider ?? 'openai',
    cache: { aware: false, maxCachedIdx: -1, cold: false, ...(o.cache ?? {}) },
    stash: new BufferedStash(o.persistent ?? true),
    state: new SnapshotSessionView(snap),
    clock: { now: () => o.now ?? 1_700_000_000_000 },
    existingBreakpoints: o.existingBreakpoints ?? 0,
    window: 0,
  };
}
