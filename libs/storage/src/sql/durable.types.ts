// Row shapes the durable store shares with the sealing of its rows (crypto/sealed-rows.ts), kept
// apart from the store so the two do not import each other.

/** One original as archived: the text a marker points at, by tenant, session and id. */
export interface ArchivedStash {
  tenant: string;
  session: string;
  id: string;
  text: string;
}
