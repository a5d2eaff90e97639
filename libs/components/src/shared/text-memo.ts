// Memoises a pure function of a text, bounded by the total characters held, so a warm turn never
// recomputes what an earlier turn of any session already measured.
export function textMemo<T>(fn: (text: string) => T, maxChars = 64 * 1024 * 1024, minChars = 0): (text: string) => T {
  const memo = new Map<string, T>();
  let held = 0;
  return (text: string): T => {
    if (text.length < minChars) return fn(text);
    const hit = memo.get(text);
    if (hit !== undefined) return hit;
    const value = fn(text);
    if (held + text.length > maxChars) {
      memo.clear();
      held = 0;
    }
    memo.set(text, value);
    held += text.length;
    return value;
  };
}
