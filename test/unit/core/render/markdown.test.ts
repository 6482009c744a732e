import { Marked } from 'marked';
import { runIsolated } from '../../../support/hang-guard';
import { markdownDeadlineMs, markdownToHtml, stripFrontMatter } from '../../../../functions/core/render/markdown';

describe('markdown', () => {
  it('removes a leading YAML front-matter block and takes the title from it', () => {
    const html = markdownToHtml('---\ntitle: "Quarterly report"\nauthor: me\n---\n# Heading\n\ntext');
    expect(html).toContain('<title>Quarterly report</title>');
    expect(html).not.toContain('author: me');
    expect(html).toContain('<h1 dir="auto" id="heading">Heading</h1>');
  });

  it('removes an empty leading front-matter block (--- then ---), keeping later rules', () => {
    expect(stripFrontMatter('---\n---\nHello')).toEqual({ body: 'Hello', frontMatter: '' });
    expect(stripFrontMatter('---\r\n...\r\nHello')).toEqual({ body: 'Hello', frontMatter: '' });
    expect(stripFrontMatter('---\n---\nHello\n\n---\n\nmore')).toEqual({ body: 'Hello\n\n---\n\nmore', frontMatter: '' });
    expect(markdownToHtml('---\n---\nHello')).not.toContain('<hr>');
  });

  it('removes a front-matter block behind a byte-order mark (editors on Windows write one)', () => {
    expect(stripFrontMatter('\uFEFF---\ntitle: Notes\n---\nHello')).toEqual({ body: 'Hello', frontMatter: 'title: Notes' });
    expect(markdownToHtml('\uFEFF---\ntitle: Notes\n---\nHello')).toContain('<title>Notes</title>');
  });

  it('keeps a --- rule that is not at the very start', () => {
    expect(stripFrontMatter('text\n---\nmore\n---\n').frontMatter).toBeNull();
  });

  it('renders GFM tables, fenced code and images with the default stylesheet', () => {
    const html = markdownToHtml('| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nconst x = 1 < 2;\n```\n\n![logo](https://example.com/logo.png)');
    expect(html).toContain('<table>');
    expect(html).toContain('<pre><code class="language-js"><span class="hljs-keyword">const</span> x = <span class="hljs-number">1</span> &lt; <span class="hljs-number">2</span>;');
    expect(html).toContain('<img src="https://example.com/logo.png" alt="logo">');
    expect(html).toMatch(/img \{ max-width: 100%/);
  });

  it('gives headings the ids GitHub gives them, so [text](#section) links reach them', () => {
    const html = markdownToHtml('# Top\n\n## Details section\n\n## Details section\n\n## Details section-1\n\n### Café & *Crème* `code` [link](x)\n\n## !!!\n\n> ## Quoted\n');
    expect(html.match(/<h\d[^>]*>/g)).toEqual(['<h1 dir="auto" id="top">', '<h2 dir="auto" id="details-section">', '<h2 dir="auto" id="details-section-1">', '<h2 dir="auto" id="details-section-1-1">', '<h3 dir="auto" id="café--crème-code-link">', '<h2 dir="auto">', '<h2 dir="auto" id="quoted">']);
  });

  it("renders GitHub's footnotes: numbered references linked to a list at the end, and back; each conversion numbers its own", () => {
    const html = markdownToHtml('Revenue grew[^growth] while costs fell[^1].\n\n[^growth]: Year on year.\n[^1]: After *one-off* items.\n');
    expect(html).toContain('grew<sup><a id="footnote-ref-growth" href="#footnote-growth"');
    expect(html).toMatch(/<section class="footnotes"[^>]*>\s*<h2 id="footnote-label" class="sr-only">Footnotes<\/h2>\s*<ol>\s*<li id="footnote-growth">\s*<p dir="auto">Year on year\. <a href="#footnote-ref-growth"/);
    expect(html).toContain('<li id="footnote-1">\n<p dir="auto">After <em>one-off</em> items.');
    expect(html).not.toContain('[^');
    expect(html.indexOf('<section class="footnotes"')).toBeGreaterThan(html.indexOf('costs fell')); // at the end, not where the notes were defined
    const next = markdownToHtml('Only[^a].\n\n[^a]: A.\n');
    expect(next).toContain('>1</a></sup>');
    expect(next).not.toContain('growth');
  });

  it("takes the title from the first heading's text: no footnote marker or link address", () => {
    expect(markdownToHtml('# Release 2.1[^1]\n\n[^1]: Out on Monday.\n')).toContain('<title>Release 2.1</title>');
    expect(markdownToHtml('# See [the guide](https://example.com/guide) **now**')).toContain('<title>See the guide now</title>');
  });

  it('gives a heading that would take a footnote\'s id the next one, so references still lead to their notes', () => {
    const html = markdownToHtml('Text[^1].\n\n## Footnote 1\n\n## Footnote label\n\n[^1]: The note.\n');
    expect(html).toContain('<h2 dir="auto" id="footnote-1-1">Footnote 1</h2>');
    expect(html).toContain('<h2 dir="auto" id="footnote-label-1">Footnote label</h2>');
    expect(html.match(/id="footnote-1"/g)).toHaveLength(1);
    expect(html).toContain('<li id="footnote-1">');
  });

  it("escapes a footnote's label in the attributes it is written into; reference and note keep one id", () => {
    const html = markdownToHtml('Text[^a" data-x="1 $&].\n\n[^a" data-x="1 $&]: The note.\n');
    expect(html).not.toContain('data-x="1');
    expect(html).toContain('aria-label="Back to reference a&quot; data-x=&quot;1 &#36;&amp;"');
    const ref = /<a id="footnote-ref-([^"]+)" href="#footnote-([^"]+)"/.exec(html)!;
    expect(ref[1]).toBe(ref[2]);
    expect(html).toContain(`<li id="footnote-${ref[2]}">`);
  });

  it('colours fenced code that names its language, as GitHub does; other code stays plain', () => {
    const html = markdownToHtml('```ts\nconst total: number = 42; // due\n```\n\n```\nconst plain = 1;\n```\n');
    expect(html).toContain('<pre><code class="language-ts"><span class="hljs-keyword">const</span> <span class="hljs-attr">total</span>: <span class="hljs-built_in">number</span> = <span class="hljs-number">42</span>; <span class="hljs-comment">// due</span>\n</code></pre>');
    expect(html).toContain('<pre><code>const plain = 1;\n</code></pre>');
    expect(html).toContain('.hljs-keyword, .hljs-selector-tag');
  });

  it("turns GitHub's emoji shortcodes into emoji, outside code and links; unknown names, times and code stay as written", () => {
    const html = markdownToHtml(':tada: Released :rocket: with `:tada:` and :not_an_emoji: at 12:30:45, see https://example.com/:tada:/x :+1: **:x:**\n\n```\n:tada:\n```\n');
    expect(html).toContain('<p dir="auto">🎉 Released 🚀 with <code>:tada:</code> and :not_an_emoji: at 12:30:45, see <a href="https://example.com/:tada:/x">https://example.com/:tada:/x</a> 👍 <strong>❌</strong></p>');
    expect(html).toContain('<pre><code>:tada:\n</code></pre>');
  });

  it('finds shortcodes far into a long paragraph, which is searched 1 KB at a time (a search to its end per run of text was quadratic)', () => {
    const html = markdownToHtml(`${'word '.repeat(300)}:tada: ${'*word* '.repeat(300)}:rocket: end`);
    expect(html).toContain(`${'word '.repeat(300)}🎉 ${'<em>word</em> '.repeat(300)}🚀 end</p>`);
  });

  it('builds heading ids from shortcode names as GitHub does (## :sparkles: Features → #sparkles-features), and titles from the emoji', () => {
    const html = markdownToHtml('# :sparkles: Features\n\n[go](#sparkles-features)');
    expect(html).toContain('<h1 dir="auto" id="sparkles-features">✨ Features</h1>');
    expect(html).toContain('<title>✨ Features</title>');
  });

  it("renders GitHub's alerts (> [!NOTE] … [!CAUTION]) as titled, coloured boxes; other quotes stay quotes", () => {
    const html = markdownToHtml('> [!WARNING]\n> Payment is *overdue*.\n\n> Just a quote.\n');
    expect(html).toMatch(/<div class="markdown-alert markdown-alert-warning">\s*<p class="markdown-alert-title"><svg[^>]*>[\s\S]*?<\/svg>Warning<\/p>\s*<p dir="auto">Payment is <em>overdue<\/em>\.<\/p>\s*<\/div>/);
    expect(html).toContain('<blockquote>\n<p dir="auto">Just a quote.</p>\n</blockquote>');
  });

  it('lets an alert longer than a page break across pages, as long code blocks do; short ones move whole', () => {
    const long = markdownToHtml('Intro.\n\n> [!WARNING]\n' + Array.from({ length: 40 }, (_, i) => `> Line ${i}.\n>`).join('\n'));
    expect(long).toContain('<div class="flow markdown-alert markdown-alert-warning">');
    expect(long).toMatch(/\.markdown-alert\.flow \{ break-inside: auto;/);
    expect(markdownToHtml('> [!TIP]\n> Short.')).toContain('<div class="markdown-alert markdown-alert-tip">');
  });

  it('lays out tables of 7 columns or more at the page width, lets long code blocks break across pages', () => {
    const table = (n: number) => `|${' h |'.repeat(n)}\n|${' - |'.repeat(n)}\n|${' c |'.repeat(n)}\n`;
    expect(markdownToHtml(table(6))).toContain('<table>');
    expect(markdownToHtml(table(7))).toContain('<table class="wide">');
    expect(markdownToHtml(`\`\`\`\n${'x\n'.repeat(30)}\`\`\``)).toContain('<pre><code>');
    expect(markdownToHtml(`\`\`\`\n${'x\n'.repeat(31)}\`\`\``)).toContain('<pre class="flow"><code>');
  });

  it('takes the title from the first real heading: not from a code block or comment, and setext headings count', () => {
    expect(markdownToHtml('```bash\n# install deps\nnpm i\n```\n\n# Setup guide')).toContain('<title>Setup guide</title>');
    expect(markdownToHtml('<!--\n# draft\n-->\n# Shown')).toContain('<title>Shown</title>');
    expect(markdownToHtml('Setup guide\n===========\n\ntext')).toContain('<title>Setup guide</title>');
  });

  it('escapes the title taken from the first heading', () => {
    expect(markdownToHtml('# <script>x</script>')).toContain('<title>&lt;script&gt;x&lt;/script&gt;</title>');
  });

  it('takes titles without trailing blanks or closing #s, also from hostile lines (no regex backtracking over them)', () => {
    expect(markdownToHtml('## Results  ##  \n\ntext')).toContain('<title>Results</title>');
    expect(markdownToHtml('---\ntitle: Plan   \n---\nbody')).toContain('<title>Plan</title>');
    const [heading, frontMatter] = runIsolated(`
      const { markdownToHtml } = load('functions/core/render/markdown.ts');
      const blanks = ' '.repeat(100_000);
      console.log(JSON.stringify([markdownToHtml('# a' + blanks + 'x'), markdownToHtml('---\\ntitle: a' + blanks + 'x\\n---\\nbody')]));
    `) as string[];
    expect(heading).toContain(`<title>a${' '.repeat(100_000)}x</title>`);
    expect(frontMatter).toContain('x</title>');
  });

  it('refuses Markdown nested too deeply to convert as INVALID_PARAMETER, not a crash', () => {
    expect(() => markdownToHtml(`${'>'.repeat(6000)} x`)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: expect.objectContaining({ parameter: 'markdown' }) }));
  });

  it('names a block of megabytes among the causes when the parser overflows its stack on Markdown with no nesting at all', () => {
    // One paragraph of 2.5 million one-letter lines (5 MB, within the request limit): marked's paragraph pattern
    // overflows V8's regex stack from about 2.2 MB. The deadline is generous: the overflow, not time, is under test.
    expect(() => markdownToHtml('a\n'.repeat(2_500_000), { deadlineMs: 60_000 })).toThrow(
      expect.objectContaining({ code: 'INVALID_PARAMETER', message: expect.stringContaining('a single block of megabytes'), details: { parameter: 'markdown', reason: 'too_deep_or_long' } }),
    );
  });

  it('stops a parse that overruns its deadline and refuses it as INVALID_PARAMETER', () => {
    // 32 KB of `*a_` keeps marked backtracking for seconds; a 1 ms deadline must interrupt it mid-regex.
    const hostile = '*a_'.repeat(11_000);
    expect(() => markdownToHtml(hostile, { deadlineMs: 1, parameter: 'url' })).toThrow(
      expect.objectContaining({ code: 'INVALID_PARAMETER', details: { parameter: 'url', reason: 'conversion_deadline', deadline_ms: 1 } }),
    );
    expect(() => markdownToHtml(hostile, { deadlineMs: 1 })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: { parameter: 'markdown', reason: 'conversion_deadline', deadline_ms: 1 } }));
    // The shared parse context is left clean: the next document converts normally.
    expect(markdownToHtml('# Next\n\n*fine*')).toContain('<em>fine</em>');
  });

  it('prints code plain rather than refuse a document whose highlighting overran the deadline (one block can take most of a second)', () => {
    const slowHighlighter = (code: string) => {
      const until = Date.now() + 300;
      while (Date.now() < until); // a grammar backtracking on hostile input
      return `<span class="hljs-keyword">${code}</span>`;
    };
    const source = '# Report\n\n```csharp\nvar x = 1;\n```\n';
    const html = markdownToHtml(source, { deadlineMs: 150, highlighter: slowHighlighter });
    expect(html).toContain('<pre><code class="language-csharp">var x = 1;\n</code></pre>');
    // Markdown that plain parsing cannot finish is still refused, highlighted or not.
    expect(() => markdownToHtml(`${'*a_'.repeat(11_000)}\n\n\`\`\`js\nx\n\`\`\`\n`, { deadlineMs: 1, highlighter: slowHighlighter })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ reason: 'conversion_deadline' }) }),
    );
  });

  it('renders the tokens again with code plain when highlighting overran the deadline, without lexing the document again', () => {
    // Lexing is the costly part on hostile input: done twice, a conversion held the thread for twice its deadline.
    const lexer = jest.spyOn(Marked.prototype, 'lexer');
    try {
      const slowHighlighter = (code: string) => {
        const until = Date.now() + 300;
        while (Date.now() < until); // a grammar backtracking on hostile input
        return `<span class="hljs-keyword">${code}</span>`;
      };
      const html = markdownToHtml('# Report\n\n> [!NOTE]\n> Read this.\n\n```csharp\nvar x = 1;\n```\n', { deadlineMs: 150, highlighter: slowHighlighter });
      expect(html).toContain('<pre><code class="language-csharp">var x = 1;\n</code></pre>');
      // What lexing settled is kept: the title, heading ids and alerts (made by the token walk).
      expect(html).toContain('<title>Report</title>');
      expect(html).toContain('<h1 dir="auto" id="report">Report</h1>');
      expect(html).toContain('markdown-alert-note');
      expect(lexer).toHaveBeenCalledTimes(1);
    } finally {
      lexer.mockRestore();
    }
  });

  it('names thousands of footnotes among the causes when a parse overruns its deadline, and footnotes work again after it', () => {
    const notes = Array.from({ length: 3000 }, (_, i) => i);
    const heavy = `${notes.map((i) => `word[^${i}]`).join(' ')}\n\n${notes.map((i) => `[^${i}]: note ${i}`).join('\n')}\n`;
    expect(() => markdownToHtml(heavy, { deadlineMs: 5 })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', message: expect.stringContaining('thousands of footnotes') }));
    // A parse cut off mid-way leaves the footnote extension's state behind: the next document has a parser of its own.
    expect(markdownToHtml('Next[^a].\n\n[^a]: Fine.\n')).toContain('<li id="footnote-a">');
  });

  it('refuses Markdown that converts to over 5 MB of HTML and over ten times its own size (thousands of footnote references), and converts long ordinary text', () => {
    const references = `x${'[^a]'.repeat(100_000)}\n\n[^a]: note\n`;
    // Deadlines far off: the size is what is refused here, however slowly a loaded machine parses.
    expect(() => markdownToHtml(references, { parameter: 'url', deadlineMs: 120_000 })).toThrow(
      expect.objectContaining({ code: 'INVALID_PARAMETER', details: { parameter: 'url', reason: 'converted_too_large', max_html_bytes: 5 * 1024 * 1024 }, message: expect.stringContaining('Footnote references and alerts expand the most') }),
    );
    // Plain paragraphs of the same scale grow a little, not tenfold: converted, however large.
    const prose = 'A sentence of an ordinary long report.\n\n'.repeat(150_000);
    expect(markdownToHtml(prose, { deadlineMs: 120_000 }).length).toBeGreaterThan(5 * 1024 * 1024);
  });

  it('gives larger documents a longer deadline', () => {
    expect(markdownDeadlineMs(0)).toBe(1000);
    expect(markdownDeadlineMs(6_000_000)).toBe(4000);
  });
});
