import { markdownToHtml } from '../../../../functions/core/render/markdown';
import { typesetMath } from '../../../../functions/core/render/markdown-math';

/** The document's body, without KaTeX's TeX annotations (the source it keeps beside each formula). */
const body = (markdown: string) => {
  const html = markdownToHtml(markdown);
  return html.slice(html.indexOf('<body'), html.indexOf('<script>')).replace(/<annotation[\s\S]*?<\/annotation>/g, '');
};
const formulas = (html: string) => html.match(/<math[^>]*>/g) ?? [];

describe('GitHub math in Markdown', () => {
  it('typesets $…$ inline, $$…$$ and ```math blocks as MathML (display blocks), and $`…`$ with anything inside', () => {
    const html = body('Area $A = \\pi r^2$ here.\n\n$$\n\\sum_{i=1}^n i = \\frac{n(n+1)}{2}\n$$\n\n```math\n\\sqrt{2}\n```\n\nAnd $`a<b`$.\n');
    expect(formulas(html)).toEqual([
      '<math xmlns="http://www.w3.org/1998/Math/MathML">',
      '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">',
      '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">',
      '<math xmlns="http://www.w3.org/1998/Math/MathML">',
    ]);
    expect(html).toContain('<mi>π</mi>');
    expect(html).toContain('<mfrac>');
    expect(html).toContain('<msqrt>');
    expect(html).toContain('<mo>&lt;</mo>');
  });

  it('typesets $$…$$ inside a line in display style, a $$ block indented up to 3 spaces or right after a paragraph line as a display block', () => {
    expect(formulas(body('Inline $$x$$ in text.'))).toEqual(['<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">']);
    for (const markdown of ['   $$\nx\n$$\n', 'Text before\n$$\nx\n$$\n']) {
      expect([markdown, body(markdown).match(/<div class="math-display">/g)]).toEqual([markdown, ['<div class="math-display">']]);
    }
  });

  it('reads no formula with a space just inside a dollar', () => {
    expect(formulas(body('Between $ a$ here.'))).toEqual([]);
    expect(formulas(body('And $b $ here.'))).toEqual([]);
  });

  it('leaves money, shell variables, escaped dollars and code alone', () => {
    const html = body('Costs $5 and $10. Paths $HOME/$USER and $PATH. Escaped \\$x$ stays. Code `$y$` too.\n\n```sh\necho $HOME $$\n```\n');
    expect(formulas(html)).toEqual([]);
    expect(html).toContain('Costs $5 and $10. Paths $HOME/$USER and $PATH. Escaped $x$ stays. Code <code>$y$</code> too.');
  });

  it('writes \\mathbb, \\mathcal, \\mathbf and the other alphabets in Unicode math letters (Chromium ignores mathvariant)', () => {
    const html = typesetMath('\\mathbb{R}^n \\mathbb{1} \\mathcal{L} \\mathbf{x} \\mathfrak{g} \\mathsf{A} \\mathtt{t} \\boldsymbol{\\alpha} \\textbf{a\\&b} \\mathrm{d}x', false).replace(/<annotation[\s\S]*?<\/annotation>/g, '');
    const letters = [...html.matchAll(/<(?:mi|mn|mtext)[^>]*>([^<]*)</g)].map((m) => m[1]);
    expect(letters).toEqual(['ℝ', 'n', '𝟙', 'ℒ', '𝐱', '𝔤', '𝖠', '𝚝', '𝜶', '𝐚&amp;𝐛', 'd', 'x']);
    expect(html).not.toMatch(/mathvariant="(?!normal")/);
    expect(typesetMath('\\mathbf{\\Gamma}', false)).toContain('<mi mathvariant="normal">𝚪</mi>');
  });

  it('prints a formula KaTeX cannot read as its source in red instead of failing the document', () => {
    expect(body('Bad $\\frac{1$ here.')).toMatch(/<span class="katex-error"[^>]*style="color:#cc0000">\\frac\{1<\/span> here/);
    expect(body('Unknown $\\notacommand{x}$ here.')).toContain('<mstyle mathcolor="#cc0000"><mtext>\\notacommand</mtext></mstyle>');
  });

  it('makes no links or HTML from formulas, and ends a self-repeating macro quickly', () => {
    expect(typesetMath('\\href{javascript:alert(1)}{x} \\url{https://example.com} \\htmlClass{c}{x}', false)).not.toMatch(/<a\b|href=|class="c"/);
    const started = Date.now();
    expect(typesetMath('\\def\\a{\\a\\a}\\a', true)).toContain('katex-error');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
