import { Script, createContext } from 'node:vm';
import { Marked, type MarkedExtension, Renderer, type Token, type Tokens } from 'marked';
import markedAlert from 'marked-alert';
import { get as emojiNamed } from 'node-emoji';
import { invalidParameter } from '../errors';
import { CODE_HIGHLIGHT_STYLESHEET, type CodeHighlighter, codeHighlighter } from './code-highlight';
import { FALLBACK_FAMILIES } from './fonts';
import { GITHUB_FOOTNOTES, footnoteIds } from './markdown-footnotes';
import { GITHUB_MATH, LOOKAHEAD, ahead, typesetMath } from './markdown-math';

/**
 * A leading YAML front-matter block (--- … --- or …), with an optional byte-order mark before it. It may be empty
 * (`---` straight followed by `---`, as Jekyll pages often start): the lazy `??` tries that first, so the block
 * still ends at its first closing line.
 */
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)??(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export function stripFrontMatter(markdown: string): { body: string; frontMatter: string | null } {
  const m = FRONT_MATTER.exec(markdown);
  if (!m) return { body: markdown, frontMatter: null };
  return { body: markdown.slice(m[0].length), frontMatter: m[1] ?? '' };
}

/**
 * `text` without the trailing characters in `chars`, by a backwards scan: a regex such as /[ \t]*$/ retries from
 * every position of a long run and takes quadratic time on hostile input.
 */
function trimEnd(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1])) end--;
  return text.slice(0, end);
}

/** The `title:` scalar of a front-matter block, if it has a simple one. */
function frontMatterTitle(frontMatter: string | null): string | null {
  if (!frontMatter) return null;
  const m = /^title:[ \t]*([^\n]*)$/m.exec(frontMatter);
  const value = m ? trimEnd(m[1], ' \t\r') : '';
  if (!value) return null;
  return value.replace(/^(['"])(.*)\1$/, '$2');
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * The default stylesheet for Markdown: readable print typography, tables, code blocks and images that fit the page.
 * Images fit the page both ways: in print, 100vh is the page area (paper less margins), so a tall image shrinks to one
 * page instead of being sliced across two (object-fit keeps the proportions of one with a width attribute); it stops
 * 6em short of a page, so that a heading above it prints on the same page (at a full page, the text before, the
 * heading and the image printed on three pages) and the line holding it, a little taller than the image, no longer
 * spills onto a blank page. Tables of many columns (`wide`) are laid out at the page's width, long links and code in
 * any cell may wrap anywhere, and a table that still overflows breaks its cells anywhere (`fit-page`,
 * FIT_TABLES_SCRIPT): a table never pushes past the page. Short code blocks and alerts move whole to the next page;
 * long ones (`flow`) break.
 * Lists nested in a list have no margins of their own (GitHub's spacing: they left a blank line after them), and a
 * task list's items print no bullet (it showed through the disabled checkbox as a dot or a ring).
 * Emoji are taken from Noto Color Emoji before any other face (a face limited to their code points, so text keeps its
 * own): a face with some of its own draws them in black (DejaVu Sans did, 😀 😂 😉 …, until the shipped faces lost
 * them; a deployment with other fonts may still have such a face). The face's range includes the characters that join
 * emoji into one (ZWJ, VS16, the keycap mark, tag characters): taken from another face, they split a sequence, and
 * 👨‍👩‍👧 printed as three people, 👩🏽‍💻 as a woman and a laptop, 🏴󠁧󠁢󠁳󠁣󠁴󠁿 as a black flag (Indic and Arabic text with
 * joiners prints the same either way).
 * No @page margins here: Chromium lets CSS page margins override the request's, so Markdown's default margin is
 * applied through the options instead (MARKDOWN_DEFAULT_MARGIN) and a caller's `margin` still wins. No
 * `print-color-adjust: exact` either: it prints backgrounds even with the caller's `printBackground: false`.
 */
export const MARKDOWN_STYLESHEET = `
:root { color-scheme: light; }
@font-face { font-family: "Markdown Emoji"; src: local("Noto Color Emoji"); unicode-range: U+200D, U+20E3, U+FE0F, U+1F000-1FAFF, U+E0020-E007F; }
body { font-family: "Markdown Emoji", -apple-system, "Segoe UI", "Helvetica Neue", Arial, "DejaVu Sans", ${FALLBACK_FAMILIES.map((family) => `"${family}"`).join(', ')}, sans-serif; font-size: 11pt; line-height: 1.55; color: #1f2328; margin: 0; word-wrap: break-word; }
h1, h2, h3, h4, h5, h6 { margin: 1.4em 0 0.6em; font-weight: 600; line-height: 1.25; break-after: avoid; page-break-after: avoid; }
h1 { font-size: 2em; padding-bottom: 0.3em; border-bottom: 1px solid #d1d9e0; }
h2 { font-size: 1.5em; padding-bottom: 0.3em; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.25em; } h4 { font-size: 1em; } h5 { font-size: 0.875em; } h6 { font-size: 0.85em; color: #59636e; }
body > :first-child { margin-top: 0; }
p, ul, ol, dl, table, pre, blockquote { margin: 0 0 1em; }
a { color: #0969da; text-decoration: none; }
ul, ol { padding-inline-start: 2em; }
ul ul, ul ol, ol ol, ol ul { margin-top: 0; margin-bottom: 0; }
li + li, li > ul, li > ol { margin-top: 0.25em; }
li:has(> input[type="checkbox"]:first-child), li:has(> p:first-child > input[type="checkbox"]:first-child) { list-style-type: none; }
li > input[type="checkbox"], li > p > input[type="checkbox"]:first-child { margin-block: 0 0.2em; margin-inline: -1.4em 0.4em; vertical-align: middle; }
blockquote { padding: 0 1em; color: #59636e; border-left: 0.25em solid #d1d9e0; }
hr { height: 0.25em; padding: 0; margin: 1.5em 0; background-color: #d1d9e0; border: 0; }
math { font-family: "DejaVu Math TeX Gyre", math; }
.math-display { margin: 0 0 1em; break-inside: avoid; }
code, kbd, samp, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 0.88em; }
kbd { display: inline-block; padding: 0.2em 0.4em; font-size: 0.8em; line-height: 1; color: #1f2328; background: #f6f8fa; border: 1px solid #d1d9e0; border-radius: 6px; box-shadow: inset 0 -1px 0 #afb8c1; vertical-align: middle; }
code { padding: 0.2em 0.4em; background-color: #eff1f3; border-radius: 6px; }
pre { padding: 12px 16px; background-color: #f6f8fa; border-radius: 6px; line-height: 1.45; white-space: pre-wrap; overflow-wrap: anywhere; break-inside: avoid; page-break-inside: avoid; }
pre.flow { break-inside: auto; page-break-inside: auto; }
pre code { padding: 0; background: transparent; border-radius: 0; font-size: 1em; }
table { border-collapse: collapse; border-spacing: 0; display: table; width: auto; max-width: 100%; }
table.wide { width: 100%; font-size: 0.8em; }
table.wide th, table.wide td { padding: 4px 6px; overflow-wrap: anywhere; }
th a, td a, th code, td code { overflow-wrap: anywhere; }
table.fit-page th, table.fit-page td { overflow-wrap: anywhere; }
thead { display: table-header-group; }
tr { break-inside: avoid; page-break-inside: avoid; border-top: 1px solid #d1d9e0; }
tr:nth-child(2n) { background-color: #f6f8fa; }
th, td { padding: 6px 13px; border: 1px solid #d1d9e0; }
th { font-weight: 600; background-color: #f6f8fa; }
img { max-width: 100%; max-height: calc(100vh - 6em); object-fit: contain; height: auto; box-sizing: content-box; break-inside: avoid; page-break-inside: avoid; }
del { color: #59636e; }
section.footnotes { margin-top: 2em; padding-top: 0.5em; border-top: 1px solid #d1d9e0; font-size: 0.85em; color: #59636e; }
section.footnotes ol { padding-inline-start: 1.5em; margin: 0; }
section.footnotes p { margin: 0; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
.markdown-alert { padding: 0.5em 1em; margin: 0 0 1em; border-left: 0.25em solid #d1d9e0; break-inside: avoid; page-break-inside: avoid; }
.markdown-alert.flow { break-inside: auto; page-break-inside: auto; }
.markdown-alert > :last-child { margin-bottom: 0; }
.markdown-alert-title { display: flex; align-items: center; gap: 0.5em; font-weight: 600; line-height: 1; break-after: avoid; page-break-after: avoid; }
.markdown-alert-title svg { fill: currentColor; }
.markdown-alert-note { border-left-color: #0969da; } .markdown-alert-note .markdown-alert-title { color: #0969da; }
.markdown-alert-tip { border-left-color: #1a7f37; } .markdown-alert-tip .markdown-alert-title { color: #1a7f37; }
.markdown-alert-important { border-left-color: #8250df; } .markdown-alert-important .markdown-alert-title { color: #8250df; }
.markdown-alert-warning { border-left-color: #9a6700; } .markdown-alert-warning .markdown-alert-title { color: #9a6700; }
.markdown-alert-caution { border-left-color: #d1242f; } .markdown-alert-caution .markdown-alert-title { color: #d1242f; }
${CODE_HIGHLIGHT_STYLESHEET}`;

/** Page margin for Markdown when the caller sends none. */
export const MARKDOWN_DEFAULT_MARGIN = { top: '18mm', right: '16mm', bottom: '18mm', left: '16mm' };

/**
 * A table whose text cannot shrink to the page (a hash, a file path, a long token in a cell of a table of a few
 * columns) would make Chromium shrink every page of the document to fit it (to 67 % for one SHA-256): such a table's
 * cells may break anywhere instead (`table.fit-page`). Only a table that overflows, measured as laid out (the window is
 * the page's width): breaking anywhere in other tables would split words that fit. Checked again at load, once images
 * in cells have their sizes.
 */
const FIT_TABLES_SCRIPT = `(() => {
  const fit = () => { for (const table of document.querySelectorAll('table:not(.fit-page)')) if (table.getBoundingClientRect().width > table.parentElement.clientWidth + 1) table.classList.add('fit-page'); };
  fit();
  addEventListener('load', fit);
})();`;

/** Tables with this many columns or more are laid out to the page's width (see `table.wide`). */
const WIDE_TABLE_COLUMNS = 7;
/** Code blocks longer than this may break across pages; shorter ones move whole to the next page. */
const SHORT_CODE_LINES = 30;

/** A heading with the GitHub-style anchor it is given before rendering (`[see](#section-name)` links reach it). */
type AnchoredHeading = Tokens.Heading & { anchor?: string };

/**
 * The text of inline tokens: emphasis, links and code as their text. For a title (`forTitle`) what a reader sees,
 * raw HTML kept as written; for an anchor what GitHub builds its ids from, raw HTML left out and an emoji shortcode
 * as its name (`## :sparkles: Features` → `#sparkles-features`). A footnote reference has no text: it is no part of
 * either.
 */
function plainText(tokens: Token[], forTitle = false): string {
  return tokens
    .map((token) => {
      if (token.type === 'html') return forTitle ? token.raw : '';
      if (token.type === 'emojiShortcode' && !forTitle) return token.raw.slice(1, -1);
      if ('tokens' in token && Array.isArray(token.tokens) && token.tokens.length) return plainText(token.tokens, forTitle);
      return 'text' in token && typeof token.text === 'string' ? token.text : '';
    })
    .join('');
}

/**
 * Gives every heading the id GitHub gives it: the text lower-cased, punctuation removed, spaces turned into hyphens,
 * and `-1`, `-2`… after a repeat, so tables of contents written for GitHub keep working in the PDF.
 */
function anchorHeadings(markdown: Marked, tokens: Token[]): void {
  // The footnotes' ids are taken first: a heading "Footnote 1" would otherwise be given footnote-1, the id of the first
  // note, and every reference [^1] would lead to the heading instead of the note.
  const seen = new Map<string, number>(footnoteIds(tokens).map((id) => [id, 0]));
  markdown.walkTokens(tokens, (token) => {
    if (token.type !== 'heading') return;
    const heading = token as AnchoredHeading;
    const base = plainText(heading.tokens).toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    if (!base) return;
    let anchor = base;
    while (seen.has(anchor)) {
      const count = seen.get(base)! + 1;
      seen.set(base, count);
      anchor = `${base}-${count}`;
    }
    seen.set(anchor, 0);
    heading.anchor = anchor;
  });
}

/**
 * Blocks of text take their direction from their own first strong letter (`dir="auto"`, as GitHub marks them): an
 * Arabic or Hebrew paragraph (also in a quote), heading or list prints right to left, aligned right, its bullets on the
 * right. Not a quote itself: `dir="auto"` skips descendants with a `dir` of their own, so it found no letter.
 */
const withDirAuto = (html: string, tag: string) => html.replace(new RegExp(`^<${tag}\\b`), `<${tag} dir="auto"`);

/** How Markdown prints beyond marked's own HTML: heading ids, text direction, wide tables, long and highlighted code blocks. */
const rendering = (highlight: CodeHighlighter): MarkedExtension => ({
  renderer: {
    heading(token) {
      const { anchor } = token as AnchoredHeading;
      return `<h${token.depth} dir="auto"${anchor ? ` id="${escapeHtml(anchor)}"` : ''}>${this.parser.parseInline(token.tokens)}</h${token.depth}>\n`;
    },
    paragraph(token) {
      return withDirAuto(Renderer.prototype.paragraph.call(this, token) as string, 'p');
    },
    list(token) {
      return withDirAuto(Renderer.prototype.list.call(this, token) as string, token.ordered ? 'ol' : 'ul');
    },
    // A table of many columns cannot shrink to the page by its content: laid out at the page's width instead (else
    // Chromium shrinks the whole document to fit it, and still cuts off its last columns).
    table(token) {
      const html = Renderer.prototype.table.call(this, token) as string;
      return token.header.length >= WIDE_TABLE_COLUMNS ? html.replace(/^<table>/, '<table class="wide">') : html;
    },
    // A long code block moved whole to the next page would leave most of a page blank and still not fit.
    code(token) {
      // GitHub's other way to write a block formula.
      if (token.lang?.trim() === 'math') return `<div class="math-display">${typesetMath(token.text, true)}</div>\n`;
      const highlighted = highlight(token.text, token.lang);
      const html = Renderer.prototype.code.call(this, highlighted === null ? token : { ...token, text: highlighted, escaped: true }) as string;
      return token.text.split('\n').length > SHORT_CODE_LINES ? html.replace(/^<pre>/, '<pre class="flow">') : html;
    },
  },
});

/**
 * Alerts, as short code blocks, move whole to the next page; one longer than SHORT_CODE_LINES (`flow`) breaks
 * across pages instead: moved whole, an alert taller than a page left most of the page before it blank.
 */
function longAlertsFlow(alerts: MarkedExtension): MarkedExtension {
  const extensions = (alerts.extensions ?? []).map((extension) => {
    if (extension.name !== 'alert' || !('renderer' in extension) || !extension.renderer) return extension;
    const render = extension.renderer;
    return {
      ...extension,
      renderer(this: ThisParameterType<typeof render>, token: Tokens.Generic) {
        const html = render.call(this, token);
        return typeof html === 'string' && token.raw.split('\n').length > SHORT_CODE_LINES ? html.replace(/^<div class="/, '<div class="flow ') : html;
      },
    };
  });
  return { ...alerts, extensions };
}

/**
 * GitHub's emoji shortcodes (`:tada:` → 🎉, `:+1:` → 👍), outside code and links; a name it does not know stays as
 * written. Names from node-emoji (emojilib's, which GitHub's mostly share).
 */
const EMOJI_SHORTCODES: MarkedExtension = {
  extensions: [
    {
      name: 'emojiShortcode',
      level: 'inline',
      // Within the lookahead, as math's hooks: marked asks on every run of text, and a search to the end of the
      // paragraph (a long one without a colon) made it quadratic. Without a colon there, the run is cut.
      start: (src: string) => {
        const at = ahead(src).indexOf(':');
        return at >= 0 ? at : src.length > LOOKAHEAD ? LOOKAHEAD - 1 : undefined;
      },
      tokenizer(src: string) {
        const match = /^:([a-z0-9_+-]{1,50}):/.exec(src);
        const emoji = match ? emojiNamed(match[1]) : undefined;
        return emoji ? { type: 'emojiShortcode', raw: match![0], text: emoji } : undefined;
      },
      renderer: (token: Tokens.Generic) => escapeHtml(String(token.text)),
    },
  ],
};

/**
 * A parser for one conversion (making one takes ~0.05 ms), with GitHub's footnotes (`text[^1]` and `[^1]: note`:
 * numbered references linked to a list at the end, and back; `markdown-footnotes.ts`), alerts (`> [!NOTE]`, `[!TIP]`,
 * `[!IMPORTANT]`, `[!WARNING]`, `[!CAUTION]`) and emoji shortcodes. One per conversion: the code highlighter's time
 * budget is per document (the footnotes are kept per lexer, so a parse cut off by its deadline leaves none behind).
 */
function createParser(highlight: CodeHighlighter): Marked {
  const parser = new Marked({ gfm: true, breaks: false, async: false });
  parser.use(GITHUB_FOOTNOTES, longAlertsFlow(markedAlert()), EMOJI_SHORTCODES, GITHUB_MATH);
  parser.use(rendering(highlight));
  return parser;
}

/** Code prints plain: the highlighter of a parse that starts again without highlighting. */
const NO_HIGHLIGHTING: CodeHighlighter = () => null;

/**
 * Markdown whose HTML passes both of these is refused: HTML input may be at most 5 MB, and Markdown rarely grows
 * more than a few times when converted, but footnote references and alerts grow 30–55 times (a 400 KB document of
 * references became 22 MB of HTML, which held a quick job for its whole 30 s before the 408).
 */
const MAX_CONVERTED_HTML_CHARS = 5 * 1024 * 1024;
const MAX_EXPANSION = 10;

/**
 * How long parsing may take. marked's inline rules backtrack quadratically on some inputs (32 KB of `*a_` repeated
 * takes over 10 s), and the parse is synchronous: without a deadline one small request would hold a Lambda, or the
 * whole local server, for minutes. Ordinary Markdown parses at several MB per second, so the budget grows with size.
 */
export function markdownDeadlineMs(length: number): number {
  return 1000 + Math.ceil((length / 1_000_000) * 500);
}

/** `vm`'s watchdog is the one way to interrupt a synchronous call (a regex included) in this thread. */
const parseInDeadline = new Script('parse()', { filename: 'markdown-parse' });
const parseContext = createContext({ parse: null as null | (() => unknown) });

/** `run` under `vm`'s watchdog: interrupted (ERR_SCRIPT_EXECUTION_TIMEOUT) after `deadlineMs`. */
function withDeadline<T>(run: () => T, deadlineMs: number): T {
  parseContext.parse = run;
  try {
    return parseInDeadline.runInContext(parseContext, { timeout: deadlineMs }) as T;
  } finally {
    parseContext.parse = null;
  }
}

/** A document lexed, with what parse() does before rendering done: ready to be rendered. */
interface Lexed {
  tokens: Token[];
  heading: string | null;
}

/**
 * `body` lexed as parse() does before rendering: the extensions' token walks (quotes become alerts) and heading ids.
 * The heading is read from the tokens, so a `# comment` in a code block or an HTML comment is no heading, a setext
 * one is.
 */
function lex(markdown: Marked, body: string): Lexed {
  const tokens = markdown.lexer(body);
  if (markdown.defaults.walkTokens) markdown.walkTokens(tokens, markdown.defaults.walkTokens);
  anchorHeadings(markdown, tokens);
  const heading = tokens.find((token): token is Tokens.Heading => token.type === 'heading');
  // Its text, not its Markdown: a footnote reference ([^1]) or a link's address is no part of the title.
  const text = heading ? plainText(heading.tokens, true).trim() : '';
  return { tokens, heading: text || null };
}

/**
 * The HTML of `body` and the text of its first top-level heading, with code highlighted; or, when that overran the
 * deadline after highlighting had begun (a block can take most of a second on hostile input, past any budget
 * check), its tokens rendered again with code plain: a document is never refused for its highlighting, only for
 * what plain parsing cannot finish. Highlighting runs only while rendering, so the document is lexed once: lexing
 * it again (the costly part on hostile input) held the thread for twice the deadline (5.8 s for a 3 s one). The
 * second rendering gets the deadline less the first pass's time outside highlighting, so the whole conversion takes
 * at most the deadline plus the time highlighting took.
 */
function parseWithHighlightingIfTime(body: string, deadlineMs: number, highlighter: CodeHighlighter): { html: string; heading: string | null } {
  let highlighting = false;
  let highlightMs = 0;
  // When the block being highlighted began: the watchdog's interruption runs no `finally`, so the block it cut off
  // is counted from here.
  let blockStarted: number | null = null;
  let lexed: Lexed | undefined;
  const started = performance.now();
  const highlight: CodeHighlighter = (code, lang) => {
    if (lang?.trim()) highlighting = true; // a block naming a language: highlight.js may run on it
    blockStarted = performance.now();
    const html = highlighter(code, lang);
    highlightMs += performance.now() - blockStarted;
    blockStarted = null;
    return html;
  };
  try {
    return withDeadline(() => {
      const markdown = createParser(highlight);
      lexed = lex(markdown, body);
      return { html: markdown.parser(lexed.tokens) as string, heading: lexed.heading };
    }, deadlineMs);
  } catch (err) {
    if (!highlighting || !lexed || (err as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err;
    const now = performance.now();
    const left = Math.ceil(deadlineMs - (now - started - highlightMs - (blockStarted === null ? 0 : now - blockStarted)));
    if (left <= 0) throw err;
    const { tokens, heading } = lexed;
    return withDeadline(() => ({ html: createParser(NO_HIGHLIGHTING).parser(tokens) as string, heading }), left);
  }
}

/**
 * Markdown → a complete HTML document with the default stylesheet. Raw HTML inside the Markdown is kept
 * (it renders in the same sandboxed page as HTML input). The title comes from front matter or the first heading.
 * A refusal names `parameter`: where the Markdown came from (the markdown field, or a URL that served Markdown).
 */
export function markdownToHtml(
  source: string,
  {
    deadlineMs = markdownDeadlineMs(source.length),
    parameter = 'markdown',
    highlighter = codeHighlighter(),
  }: { deadlineMs?: number; parameter?: string; highlighter?: CodeHighlighter } = {},
): string {
  const { body, frontMatter } = stripFrontMatter(source);
  let content: string;
  let heading: string | null;
  try {
    ({ html: content, heading } = parseWithHighlightingIfTime(body, deadlineMs, highlighter));
  } catch (err) {
    // marked recurses per nesting level: thousands of nested quotes or lists overflow the stack. Its block patterns
    // overflow it too on one block of megabytes (a 2.3 MB paragraph of one-letter lines, 5 MB of `    a` code lines,
    // `>a` lazy quote lines or `*`): such a document has no nesting at all, so the message names both causes.
    if (err instanceof RangeError) {
      throw invalidParameter(
        parameter,
        'The Markdown nests too deeply (quotes or lists thousands of levels deep), or has a single block of megabytes (a paragraph, quote, list or indented code with no blank line in it), for the Markdown parser; flatten it, or break the block up with blank lines.',
        { reason: 'too_deep_or_long' },
      );
    }
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw invalidParameter(parameter, `The Markdown could not be converted within ${deadlineMs} ms. Long runs of emphasis markers mixed with letters (such as *a_*a_…) make the Markdown parser backtrack, and tens of thousands of footnotes slow it down too; escape the markers (\\*, \\_), split the document, or send it as HTML.`, { reason: 'conversion_deadline', deadline_ms: deadlineMs });
    }
    throw err;
  }
  if (content.length > MAX_CONVERTED_HTML_CHARS && content.length > MAX_EXPANSION * source.length) {
    const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
    throw invalidParameter(
      parameter,
      `The Markdown converts to ${mb(content.length)} MB of HTML, ${Math.round(content.length / source.length)} times its own size: more than a document can be printed from in time. Footnote references and alerts expand the most (each becomes a link or a titled box); use fewer of them, or split the document.`,
      { reason: 'converted_too_large', max_html_bytes: MAX_CONVERTED_HTML_CHARS },
    );
  }
  const title = frontMatterTitle(frontMatter) ?? heading ?? 'Document';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${MARKDOWN_STYLESHEET}</style></head>
<body class="markdown-body">
${content}
<script>${FIT_TABLES_SCRIPT}</script>
</body></html>`;
}
