import hljs from 'highlight.js/lib/common';

/** Longest code block that is highlighted; longer ones print plain. */
export const MAX_HIGHLIGHTED_BLOCK_CHARS = 10_000;
/** Time one document may spend highlighting; the blocks after that print plain. */
export const HIGHLIGHT_BUDGET_MS = 250;

/** Turns a fenced code block into highlighted HTML, or null when it prints plain. */
export type CodeHighlighter = (code: string, lang: string | undefined) => string | null;

/**
 * Syntax highlighting for fenced code blocks that name a language highlight.js knows (```js, ```python, …), coloured
 * as GitHub colours them; blocks without one print plain, as on GitHub (guessing the language is slow and often
 * wrong). Some grammars are slow on some inputs (100 KB of quotes took 9 s as C#, growing with the square of the
 * length) and a document's whole conversion runs against a deadline, so each document gets a time budget and a
 * block-size cap: past either, code prints plain (monospace, uncoloured) — never refused for it. One per document.
 */
export function codeHighlighter(budgetMs = HIGHLIGHT_BUDGET_MS, now: () => number = () => performance.now()): CodeHighlighter {
  let spent = 0;
  return (code, lang) => {
    const language = lang?.trim().split(/\s/)[0];
    if (!language || !hljs.getLanguage(language) || code.length > MAX_HIGHLIGHTED_BLOCK_CHARS || spent >= budgetMs) return null;
    const started = now();
    try {
      return hljs.highlight(code, { language, ignoreIllegals: true }).value;
    } catch {
      return null; // a grammar that fails on this input: the block prints plain
    } finally {
      spent += now() - started;
    }
  };
}

/** GitHub's colours for highlighted code (its light theme's palette). */
export const CODE_HIGHLIGHT_STYLESHEET = `
.hljs-comment, .hljs-quote { color: #59636e; }
.hljs-keyword, .hljs-selector-tag, .hljs-doctag, .hljs-template-tag, .hljs-template-variable, .hljs-type, .hljs-variable.language_ { color: #cf222e; }
.hljs-title, .hljs-title.class_, .hljs-title.function_ { color: #8250df; }
.hljs-attr, .hljs-attribute, .hljs-literal, .hljs-meta, .hljs-number, .hljs-operator, .hljs-variable, .hljs-selector-attr, .hljs-selector-class, .hljs-selector-id { color: #0550ae; }
.hljs-regexp, .hljs-string, .hljs-meta .hljs-string { color: #0a3069; }
.hljs-built_in, .hljs-symbol, .hljs-bullet { color: #953800; }
.hljs-name, .hljs-selector-pseudo, .hljs-tag { color: #116329; }
.hljs-section { color: #0550ae; font-weight: 600; }
.hljs-emphasis { font-style: italic; }
.hljs-strong { font-weight: 600; }
.hljs-addition { color: #116329; background-color: #dafbe1; }
.hljs-deletion { color: #82071e; background-color: #ffebe9; }
`;
