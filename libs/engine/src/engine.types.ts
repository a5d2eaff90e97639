// The contract types the engine shares with whoever runs it: the knobs its caller reads from the
// environment and the reasons it hands back. The engine defines them; the gateway's env parser and
// error table use them, so the engine never imports the app that runs it.

/** Whether the provider's prompt cache is assumed (`auto`: from the request's own breakpoints). */
export type CacheMode = 'auto' | 'on' | 'off';
/** Whether the expand tool is offered: when a marker may need it, always, or never. */
export type InjectMode = 'auto' | 'always' | 'never';
/** Why a request was forwarded pristine (cg_fail_open_total{reason}); both are rows of the gateway's error table. */
export type FailOpenReason = 'store_unavailable' | 'internal_error';

/** REWRITE_PAYBACK_TURNS's default: the turns within which a priced rewrite must pay back. */
export const DEFAULT_PAYBACK_TURNS = 2;
