import katex from 'katex';
import type { MarkedExtension, Tokens } from 'marked';

/**
 * GitHub's math in Markdown, typeset by KaTeX as MathML, which Chromium lays out itself with the shipped math font
 * (DejaVu Math TeX Gyre; the stylesheet names it): no KaTeX stylesheet or web fonts to load, and the PDF keeps the
 * formulas as text. A formula KaTeX cannot read prints as its source in red, as GitHub shows it, rather than failing
 * the document. `\href`, `\url`, `\includegraphics` and HTML-making commands stay off (`trust: false`); macro
 * expansion is capped (KaTeX's `maxExpand`), so a self-repeating macro ends quickly.
 */
export function typesetMath(tex: string, display: boolean): string {
  return katex.renderToString(tex, { output: 'mathml', displayMode: display, throwOnError: false, trust: false, strict: 'ignore', maxExpand: 1000, maxSize: 50 });
}

/** A block formula: `$$` … `$$`, on lines of its own (GitHub's display math). */
const BLOCK_MATH = /^ {0,3}\$\$([\s\S]+?)\$\$[^\S\n]*(?:\n+|$)/;
/**
 * An inline formula, as GitHub reads one: `$…$` with no space just inside either `$` and no letter or digit just
 * after the closing one (so "$5 and $10" stays money and `$HOME/$USER` stays text) and no escaped `\$` inside (an
 * escaped dollar is text, not a way to reach a later `$`), `$$…$$` inside a line (display), or `` $`…`$ `` (anything
 * inside).
 */
const INLINE_MATH = /^(?:\$`([^`\n]+?)`\$|\$\$(?!\s)((?:\\[\s\S]|[^\\$])+?)(?<!\s)\$\$|\$(?![\s$])((?:\\[^$\n]|[^\\$\n])+?)(?<![\s\\])\$(?![\p{L}\p{N}]))/u;
/** Where an inline formula could begin: a `$` that is not escaped. */
const DOLLAR = /(?<!\\)\$/;
/**
 * How far ahead the `start` hooks look. marked asks them on every text run for the rest of the block (or document),
 * so a search to the end made long documents quadratic (100,000 footnote references in one paragraph took minutes).
 */
const LOOKAHEAD = 1024;
const ahead = (src: string) => (src.length > LOOKAHEAD ? src.slice(0, LOOKAHEAD) : src);

type MathToken = Tokens.Generic & { text: string; display: boolean };

export const GITHUB_MATH: MarkedExtension = {
  extensions: [
    {
      name: 'blockMath',
      level: 'block',
      // Only to end a paragraph that runs straight into a formula; after a blank line the block is tried anyway, and
      // a formula past the lookahead inside a paragraph still typesets (as inline `$$…$$`, in display style).
      start: (src: string) => /^ {0,3}\$\$/m.exec(ahead(src))?.index,
      tokenizer(src: string): MathToken | undefined {
        const match = BLOCK_MATH.exec(src);
        return match ? { type: 'blockMath', raw: match[0], text: match[1].trim(), display: true } : undefined;
      },
      renderer: (token) => `<div class="math-display">${typesetMath((token as MathToken).text, true)}</div>\n`,
    },
    {
      name: 'inlineMath',
      level: 'inline',
      // With no `$` within the lookahead, the text run is cut there: marked joins consecutive text runs again.
      start: (src: string) => DOLLAR.exec(ahead(src))?.index ?? (src.length > LOOKAHEAD ? LOOKAHEAD - 1 : undefined),
      tokenizer(src: string): MathToken | undefined {
        const match = INLINE_MATH.exec(src);
        if (!match) return undefined;
        const [raw, backticked, display, inline] = match;
        return { type: 'inlineMath', raw, text: backticked ?? display ?? inline, display: display !== undefined };
      },
      renderer: (token) => typesetMath((token as MathToken).text, (token as MathToken).display),
    },
  ],
};
