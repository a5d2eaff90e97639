// What every part of the savings page shares: element lookup and the number formats.
export function $(sel) {
  return document.querySelector(sel);
}
export function byTestId(id) {
  return document.querySelector('[data-testid="' + id + '"]');
}

export var fmt = {
  int: function (n) {
    return Math.round(n).toLocaleString('en-US');
  },
  tokens: function (n) {
    return fmt.int(n) + ' tokens';
  },
  usd: function (n) {
    return '$' + n.toFixed(n >= 100 ? 2 : 4);
  },
  pct: function (part, whole) {
    return whole > 0 ? ((part / whole) * 100).toFixed(1) + ' %' : '0.0 %';
  },
  ms: function (n) {
    return n.toFixed(2) + ' ms';
  },
  time: function (ms) {
    return new Date(ms).toLocaleTimeString('en-GB');
  },
};
