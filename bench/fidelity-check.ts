// What a replayed session may not lose: every marker the gateway forwards must resolve to the
// original it names (its id is the first 16 hex of that original's SHA-256), and every needle —
// a fact a later turn of the real session relies on — that the client's request holds must stay
// visible in what the gateway forwards or be one expand away (inside an original that a forwarded
// marker names). Whitespace is folded on both sides: reformatting a line loses no fact. And every
// forwarded request must pass the provider shape validator.
import { markerIds, stashId, type Dialect } from '@context-guru/components';
import { validateProviderShape } from '@context-guru/engine';

export interface Fidelity {
  /** Needles the client's requests held, counted once each. */
  needles: number;
  /** Of those, needles some forwarded request neither showed nor held one expand away. */
  needlesLost: number;
  /**
   * Of those, needles some forwarded request held only inside a marker's original: a turn that
   * needed the fact then would have cost the model one expand (how often offloading once read
   * makes the model ask back, against offloading later).
   */
  needlesBehindMarker: number;
  /** Distinct marker ids the gateway forwarded. */
  markers: number;
  /** Of those, ids whose stash entry is missing or is not the original the id names. */
  markersInexact: number;
  /** Forwarded requests the provider shape validator rejects; the first problem found. */
  invalidRequests: number;
  firstInvalid?: string;
}

type Resolve = (id: string) => Promise<string | null>;

const fold = (s: string): string => s.replace(/\s+/g, ' ');

/** Every string inside a JSON value, joined: what the model reads of it. */
function textOf(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) textOf(x, out);
  else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) textOf(x, out);
  return out;
}

export class FidelityCheck {
  private readonly seen = new Set<string>();
  private readonly lost = new Set<string>();
  private readonly behind = new Set<string>();
  private readonly markerIds = new Set<string>();
  private readonly inexact = new Set<string>();
  private invalid = 0;
  private firstInvalid: string | undefined;

  constructor(
    private readonly dialect: Dialect,
    private readonly needles: readonly string[],
    private readonly resolve: Resolve,
  ) {}

  /** Checks one turn: the client's body and what the gateway forwarded for it. */
  async turn(client: Record<string, unknown>, sent: Record<string, unknown>): Promise<void> {
    const problems = validateProviderShape(this.dialect, sent);
    if (problems.length) {
      this.invalid++;
      this.firstInvalid ??= problems[0];
    }
    // Messages (Responses: input items, Gemini: contents) only: the injected expand tool's description names `<<cg:HASH>>` as a pattern.
    const list = this.dialect === 'responses' ? 'input' : this.dialect === 'gemini' ? 'contents' : 'messages';
    const sentText = textOf(sent[list]).join('\n');
    const originals: string[] = [];
    for (const id of markerIds(sentText)) {
      this.markerIds.add(id);
      const original = await this.resolve(id);
      if (original === null || stashId(original) !== id) this.inexact.add(id);
      else originals.push(fold(original));
    }
    if (!this.needles.length) return;
    const clientText = fold(textOf(client[list]).join('\n'));
    const visible = fold(sentText);
    for (const needle of this.needles.map(fold)) {
      if (!clientText.includes(needle)) continue;
      this.seen.add(needle);
      if (visible.includes(needle)) continue;
      if (originals.some((o) => o.includes(needle))) this.behind.add(needle);
      else this.lost.add(needle);
    }
  }

  result(): Fidelity {
    return {
      needles: this.seen.size,
      needlesLost: this.lost.size,
      needlesBehindMarker: this.behind.size,
      markers: this.markerIds.size,
      markersInexact: this.inexact.size,
      invalidRequests: this.invalid,
      ...(this.firstInvalid === undefined ? {} : { firstInvalid: this.firstInvalid }),
    };
  }
}
