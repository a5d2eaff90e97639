// Presets as the component documentation defines them (listed in docs/configuration.md), plus
// `auto`. Order matters: lossless repacking first so later offloaders measure compact text;
// cacheinject last because it only adds a cache breakpoint.
export const PRESETS: Readonly<Record<string, readonly string[]>> = {
  // Nothing runs: the gateway is a transparent proxy.
  off: [],
  // Lossless only: compact JSON and a cache breakpoint.
  safe: ['format', 'cacheinject'],
  // Repeats, superseded runs and known command noise, all reversible.
  balanced: ['format', 'dedup', 'failed_run', 'cmdfilter', 'cacheinject'],
  // Balanced plus JSON-array crushing and query projection.
  aggressive: ['format', 'dedup', 'failed_run', 'cmdfilter', 'smartcrush', 'extract', 'cacheinject'],
  // Source reads become skeletons; build and test noise is filtered.
  coding: ['format', 'skeleton', 'cmdfilter', 'cacheinject'],
  // MCP servers return big JSON payloads and arrays.
  mcp: ['format', 'smartcrush', 'cacheinject'],
  // Long agentic sessions: age-based masking is the biggest lever.
  agent: ['format', 'dedup', 'failed_run', 'mask', 'extract', 'cacheinject'],
  // Run alone: it restructures the whole transcript.
  summarize: ['summarize'],
  // The default (not a seed preset): balanced's offloaders plus mask, which offloads a large output
  // once the model has answered it; the gateway prices that rewrite inside the cached prefix and
  // makes it only where it pays back (docs/cache.md).
  auto: ['format', 'dedup', 'failed_run', 'cmdfilter', 'mask', 'cacheinject'],
};

/** Component options a preset sets (a config's own `components` block overrides them, key by key). */
export const PRESET_OPTIONS: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, unknown>>>>>> = {
  // With withdraw_read_once, an output mask offloads once read is not written to the provider's
  // cache first (docs/cache.md).
  auto: { mask: { read_min_tokens: 300, keep_head_chars: 48 }, cacheinject: { withdraw_read_once: true } },
  // keep_recent alone cuts behind three newer outputs, which never pays back on a priced cache.
  agent: { mask: { read_min_tokens: 300, keep_head_chars: 48 }, cacheinject: { withdraw_read_once: true } },
};

export const PRESET_NAMES = Object.keys(PRESETS);
