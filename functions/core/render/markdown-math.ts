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
  return withMathAlphabets(katex.renderToString(tex, { output: 'mathml', displayMode: display, throwOnError: false, trust: false, strict: 'ignore', maxExpand: 1000, maxSize: 50 }));
}

/**
 * Where each math alphabet starts in Unicode's Mathematical Alphanumeric Symbols: capitals, small letters, digits,
 * Greek capitals and Greek small letters (0 where the alphabet has none).
 */
const ALPHABETS: Record<string, [number, number, number, number, number]> = {
  bold: [0x1d400, 0x1d41a, 0x1d7ce, 0x1d6a8, 0x1d6c2],
  italic: [0x1d434, 0x1d44e, 0, 0x1d6e2, 0x1d6fc],
  'bold-italic': [0x1d468, 0x1d482, 0, 0x1d71c, 0x1d736],
  script: [0x1d49c, 0x1d4b6, 0, 0, 0],
  'bold-script': [0x1d4d0, 0x1d4ea, 0, 0, 0],
  fraktur: [0x1d504, 0x1d51e, 0, 0, 0],
  'bold-fraktur': [0x1d56c, 0x1d586, 0, 0, 0],
  'double-struck': [0x1d538, 0x1d552, 0x1d7d8, 0, 0],
  'sans-serif': [0x1d5a0, 0x1d5ba, 0x1d7e2, 0, 0],
  'bold-sans-serif': [0x1d5d4, 0x1d5ee, 0x1d7ec, 0x1d756, 0x1d770],
  'sans-serif-italic': [0x1d608, 0x1d622, 0, 0, 0],
  'sans-serif-bold-italic': [0x1d63c, 0x1d656, 0, 0x1d790, 0x1d7aa],
  monospace: [0x1d670, 0x1d68a, 0x1d7f6, 0, 0],
};
/** Letters Unicode had encoded before the math block (its slots there are empty): ℝ, ℒ, ℭ, ℎ … */
const EARLIER_LETTERS: Record<string, Record<string, number>> = {
  italic: { h: 0x210e },
  script: { B: 0x212c, E: 0x2130, F: 0x2131, H: 0x210b, I: 0x2110, L: 0x2112, M: 0x2133, R: 0x211b, e: 0x212f, g: 0x210a, o: 0x2134 },
  fraktur: { C: 0x212d, H: 0x210c, I: 0x2111, R: 0x211c, Z: 0x2128 },
  'double-struck': { C: 0x2102, H: 0x210d, N: 0x2115, P: 0x2119, Q: 0x211a, R: 0x211d, Z: 0x2124 },
};

function inAlphabet(variant: string, text: string): string {
  const [capital, small, digit, greekCapital, greekSmall] = ALPHABETS[variant];
  return [...text]
    .map((char) => {
      const earlier = EARLIER_LETTERS[variant]?.[char];
      if (earlier) return String.fromCodePoint(earlier);
      const code = char.codePointAt(0)!;
      const base =
        code >= 0x41 && code <= 0x5a ? capital && capital + code - 0x41
        : code >= 0x61 && code <= 0x7a ? small && small + code - 0x61
        : code >= 0x30 && code <= 0x39 ? digit && digit + code - 0x30
        : code >= 0x391 && code <= 0x3a9 ? greekCapital && greekCapital + code - 0x391
        : code >= 0x3b1 && code <= 0x3c9 ? greekSmall && greekSmall + code - 0x3b1
        : 0;
      return base ? String.fromCodePoint(base) : char;
    })
    .join('');
}

/**
 * KaTeX marks `\mathbb{R}`, `\mathcal{L}`, `\mathbf{x}` … with MathML's `mathvariant`, which Chromium ignores (MathML
 * Core dropped it): they printed as plain letters. The letters are written in Unicode's math alphabets instead (ℝ, ℒ,
 * 𝐱), which the shipped math face draws.
 */
function withMathAlphabets(mathml: string): string {
  return mathml.replace(/<(mi|mn|mo|mtext)( [^>]*?)?mathvariant="([a-z-]+)"([^>]*)>([^<]*)<\/\1>/g, (element, tag: string, before = '', variant: string, after: string, text: string) =>
    // Character references (`&amp;`) are kept as they are; only the text between them changes alphabet.
    Object.hasOwn(ALPHABETS, variant) ? `<${tag}${before}mathvariant="normal"${after}>${text.replace(/[^&]+|&[^;]*;?/g, (part) => (part[0] === '&' ? part : inAlphabet(variant, part)))}</${tag}>` : element,
  );
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
export const LOOKAHEAD = 1024;
export const ahead = (src: string) => (src.length > LOOKAHEAD ? src.slice(0, LOOKAHEAD) : src);

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
