// Command outputs as agents receive them, shared by the cmdfilter tests: a pytest run the builtin
// pytest filter shrinks, and a README no filter matches (a selector miss).
export const PYTEST_RUN = [
  '============================= test session starts ==============================',
  'platform linux -- Python 3.11.7, pytest-9.0.3, pluggy-1.6.0',
  'rootdir: /srv/shop',
  'collected 24 items',
  '',
  ...Array.from(
    { length: 23 },
    (_, i) => `tests/test_cart.py::test_case_${i} PASSED${' '.repeat(20)}[ ${String(Math.round((i + 1) * 4.1)).padStart(2)}%]`,
  ),
  'tests/test_cart.py::test_discount_rounding FAILED                     [100%]',
  '',
  'FAILED tests/test_cart.py::test_discount_rounding - assert 4.995 == 5',
  '========================= 1 failed, 23 passed in 0.31s =========================',
  '',
].join('\n');

export const SHOP_README = `# Shop service\n\n${'The checkout flow is documented in docs/checkout.md. '.repeat(12)}\n`;
