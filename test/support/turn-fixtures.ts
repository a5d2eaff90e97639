// What the turn-cache tests share: prepareRequest's dependencies over a fresh memory store (with or
// without a turn cache), and the way Claude Code moves its breakpoint on every turn.
import { systemClock } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import { createLogger } from '../../libs/engine/src/logger';
import type { PrepareDeps } from '../../libs/engine/src/prepare-request';
import type { TurnCache } from '../../libs/engine/src/wire/turn-cache';
import type { anthropicTurn } from './transcripts';

export function turnDeps(turns?: TurnCache): PrepareDeps {
  return {
    store: new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 }),
    turns,
    clock: systemClock,
    log: createLogger('error', () => undefined),
    injectMode: 'auto',
  };
}

/** Claude Code moves its cache_control breakpoint to the newest message every turn. */
export function withMovingBreakpoint(body: ReturnType<typeof anthropicTurn>): ReturnType<typeof anthropicTurn> {
  const messages = body.messages.map((m) => ({ ...m }));
  const last = messages[messages.length - 1]!;
  if (Array.isArray(last.content)) {
    const blocks = (last.content as Array<Record<string, unknown>>).map((b) => ({ ...b }));
    blocks[blocks.length - 1]!.cache_control = { type: 'ephemeral' };
    last.content = blocks;
  }
  return { ...body, messages };
}
