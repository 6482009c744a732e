import { MAX_HIGHLIGHTED_BLOCK_CHARS, codeHighlighter } from '../../../../functions/core/render/code-highlight';

describe('codeHighlighter', () => {
  it('highlights a block whose language highlight.js knows, by its name or alias', () => {
    const highlight = codeHighlighter();
    expect(highlight('const x = "a"; // note', 'js')).toBe('<span class="hljs-keyword">const</span> x = <span class="hljs-string">&quot;a&quot;</span>; <span class="hljs-comment">// note</span>');
    expect(highlight('def f(): pass', 'python {.numberLines}')).toContain('<span class="hljs-keyword">def</span>');
  });

  it('leaves plain (null) a block without a language or with one it does not know, escaping nothing itself', () => {
    const highlight = codeHighlighter();
    expect(highlight('<b>x</b>', undefined)).toBeNull();
    expect(highlight('<b>x</b>', '')).toBeNull();
    expect(highlight('<b>x</b>', 'no-such-language')).toBeNull();
  });

  it('keeps colouring a block past text its grammar calls illegal (a stray word after a JSON object)', () => {
    expect(codeHighlighter()('{"a": 1} trailing#', 'json')).toContain('<span class="hljs-attr">&quot;a&quot;</span>');
  });

  it('escapes HTML inside highlighted code', () => {
    expect(codeHighlighter()('let s = "<script>alert(1)</script>";', 'js')).not.toContain('<script>');
  });

  it(`leaves blocks over ${MAX_HIGHLIGHTED_BLOCK_CHARS} characters plain (some grammars take time growing with the square of the length)`, () => {
    const highlight = codeHighlighter();
    expect(highlight('x'.repeat(MAX_HIGHLIGHTED_BLOCK_CHARS), 'js')).not.toBeNull();
    expect(highlight('x'.repeat(MAX_HIGHLIGHTED_BLOCK_CHARS + 1), 'js')).toBeNull();
  });

  it('stops highlighting once the document has spent its time budget: the later blocks print plain', () => {
    let clock = 0;
    // Each highlight "takes" 100 ms on this clock: two fit in a 250 ms budget, the third starts within it, then none.
    const highlight = codeHighlighter(250, () => (clock += 100));
    const results = [1, 2, 3, 4, 5].map(() => highlight('let a = 1;', 'js'));
    expect(results.map((r) => r !== null)).toEqual([true, true, true, false, false]);
    // A budget spent exactly is spent.
    let exact = 0;
    const spentExactly = codeHighlighter(250, () => (exact += 125));
    expect([1, 2, 3].map(() => spentExactly('let a = 1;', 'js') !== null)).toEqual([true, true, false]);
  });
});
