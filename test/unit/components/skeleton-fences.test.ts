// Fenced-block detection for skeleton: CommonMark fences, the tag taken from the info string, and
// exact code ranges so everything outside the code is preserved byte for byte.
import { findFencedBlocks } from '../../../libs/components/src/offload/skeleton/fences';

const code = (text: string) => findFencedBlocks(text).map((b) => ({ tag: b.tag, code: text.slice(b.start, b.end) }));

describe('skeleton fenced blocks', () => {
  it('finds each block with its tag and exact code range', () => {
    const text = 'src/a.go\n```go\nfunc A() {}\n```\ntext between\n```python\ndef b():\n    pass\n```\n';
    expect(code(text)).toEqual([
      { tag: 'go', code: 'func A() {}\n' },
      { tag: 'python', code: 'def b():\n    pass\n' },
    ]);
  });

  it('reads the tag from common info-string shapes, case-insensitively', () => {
    const tags = ['{.python}', 'ts title="x.ts"', 'py:src/a.py', 'Go', '  rust  ', ''].map(
      (info) => findFencedBlocks(`\`\`\`${info}\nx\n\`\`\`\n`)[0]!.tag,
    );
    expect(tags).toEqual(['python', 'ts', 'py', 'go', 'rust', '']);
  });

  it('closes only on the same fence character with at least the opening length', () => {
    const text = '~~~~ruby\n~~~\n```\ndef a; end\n~~~~~\nafter';
    expect(code(text)).toEqual([{ tag: 'ruby', code: '~~~\n```\ndef a; end\n' }]);
  });

  it('treats a backtick info string containing a backtick as inline code, not a fence', () => {
    expect(findFencedBlocks('```js `x` ```\nnot code\n')).toEqual([]);
  });

  it('allows up to three spaces of indentation and CRLF line ends', () => {
    expect(code('   ```c\r\nint x;\r\n   ```\r\n')).toEqual([{ tag: 'c', code: 'int x;\r\n' }]);
    expect(findFencedBlocks('    ```c\nint x;\n    ```\n')).toEqual([]);
  });

  it('runs an unclosed fence to the end of the text', () => {
    expect(code('head\n```go\npackage x\nfunc A() {')).toEqual([{ tag: 'go', code: 'package x\nfunc A() {' }]);
  });
});
