// The rewrite header of a gateway answer (docs/cache.md): `planned; from=<i>` names the first
// message (input item, content) a planned rewrite changes; any other prefix change is a bust.

/** The index a planned rewrite announced, or undefined when the answer announced none. */
export function plannedFrom(header: string | null | undefined): number | undefined {
  const m = /^planned; from=(\d+)$/.exec(header ?? '');
  return m ? Number(m[1]) : undefined;
}
