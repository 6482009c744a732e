import { markdownToHtml } from '../../../../functions/core/render/markdown';
import { runIsolated } from '../../../support/hang-guard';

/** The document's body: the HTML converted from the Markdown, without the page around it. */
const body = (markdown: string, options?: Parameters<typeof markdownToHtml>[1]) => {
  const html = markdownToHtml(markdown, options);
  return html.slice(html.indexOf('<body class="markdown-body">\n') + '<body class="markdown-body">\n'.length, html.indexOf('\n<script>'));
};
const ref = (id: string, n: number, suffix = '') => `<sup><a id="footnote-ref-${id}${suffix}" href="#footnote-${id}" data-footnote-ref aria-describedby="footnote-label">${n}</a></sup>`;
const back = (id: string, label: string, n = 1) => ` <a href="#footnote-ref-${id}${n > 1 ? `-${n}` : ''}" data-footnote-backref aria-label="Back to reference ${label}">${n > 1 ? `↩<sup>${n}</sup>` : '↩'}</a>`;
const section = (items: string) => `<section class="footnotes" data-footnotes>\n<h2 id="footnote-label" class="sr-only">Footnotes</h2>\n<ol>\n${items}</ol>\n</section>\n`;

/**
 * How many array elements searches look through (filter, find, some, indexOf…) while `convert` runs, and how many Map
 * lookups it makes: the work of finding notes by label, whichever way an implementation finds them.
 */
function searchWork(convert: () => void): { elementsSearched: number; mapLookups: number } {
  const searches = ['filter', 'find', 'findIndex', 'findLast', 'findLastIndex', 'some', 'every', 'indexOf', 'lastIndexOf', 'includes'] as const;
  const proto = Array.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = searches.map((name) => proto[name]);
  const mapGet = Map.prototype.get;
  const work = { elementsSearched: 0, mapLookups: 0 };
  searches.forEach((name, i) => {
    proto[name] = function (this: unknown[], ...args: unknown[]) {
      work.elementsSearched += this.length;
      return originals[i].apply(this, args);
    };
  });
  Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
    work.mapLookups++;
    return mapGet.call(this, key);
  };
  try {
    convert();
  } finally {
    searches.forEach((name, i) => (proto[name] = originals[i]));
    Map.prototype.get = mapGet;
  }
  return work;
}

/** `notes` footnotes, each referenced twice in a paragraph of its own, all defined at the end. */
function manyFootnotes(notes: number): string {
  const ids = Array.from({ length: notes }, (_, i) => i);
  return `${ids.map((i) => `Claim ${i}[^${i}] and again[^${i}].`).join('\n\n')}\n\n${ids.map((i) => `[^${i}]: Note ${i}.`).join('\n')}\n`;
}

describe('GitHub footnotes in Markdown', () => {
  it('numbers notes by first reference, links every reference and back (↩, ↩²…), lists only referenced notes, leaves unknown labels as text', () => {
    const markdown =
      '[^early]: Defined before its reference.\n\n' +
      'First[^late], then[^early], again[^late] and[^late]; unknown[^nope] stays.\n\n' +
      '> [^late]: Defined in a quote, after.\n\n' +
      '[^unused]: Never referenced.\n';
    expect(body(markdown)).toBe(
      `<p dir="auto">First${ref('late', 1)}, then${ref('early', 2)}, again${ref('late', 1, '-2')} and${ref('late', 1, '-3')}; unknown[^nope] stays.</p>\n` +
        '<blockquote>\n</blockquote>\n' +
        section(
          `<li id="footnote-late">\n<p dir="auto">Defined in a quote, after.${back('late', 'late')}${back('late', 'late', 2)}${back('late', 'late', 3)}</p>\n</li>\n` +
            `<li id="footnote-early">\n<p dir="auto">Defined before its reference.${back('early', 'early')}</p>\n</li>\n`,
        ),
    );
  });

  it("reads a note's indented lines (4 spaces or a tab) as its own block Markdown; the back link follows its last block", () => {
    const markdown = 'Text[^list] and[^tab].\n\n[^list]: A note of blocks:\n\n    - one\n    - *two*\n\n    | a | b |\n    |---|---|\n    | 1 | 2 |\n\n[^tab]: First line\n\tsecond line.\n';
    expect(body(markdown)).toBe(
      `<p dir="auto">Text${ref('list', 1)} and${ref('tab', 2)}.</p>\n` +
        section(
          '<li id="footnote-list">\n<p dir="auto">A note of blocks:</p>\n<ul dir="auto">\n<li>one</li>\n<li><em>two</em></li>\n</ul>\n' +
            `<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody><tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody></table>${back('list', 'list')}\n</li>\n` +
            `<li id="footnote-tab">\n<p dir="auto">First line\nsecond line.${back('tab', 'tab')}</p>\n</li>\n`,
        ),
    );
  });

  it('numbers a reference inside a note after the references before that note; a label defined twice keeps its first note', () => {
    const markdown = 'A[^a] B[^c].\n\n[^a]: See[^b].\n\n[^b]: Bee.\n\n[^c]: Sea.\n\n[^a]: Ignored.\n';
    expect(body(markdown)).toBe(
      `<p dir="auto">A${ref('a', 1)} B${ref('c', 2)}.</p>\n` +
        section(
          `<li id="footnote-a">\n<p dir="auto">See${ref('b', 3)}.${back('a', 'a')}</p>\n</li>\n` +
            `<li id="footnote-c">\n<p dir="auto">Sea.${back('c', 'c')}</p>\n</li>\n` +
            `<li id="footnote-b">\n<p dir="auto">Bee.${back('b', 'b')}</p>\n</li>\n`,
        ),
    );
  });

  it('writes labels into attributes escaped, reference and note deriving one id from them', () => {
    const id = 'a%26quot%3B%20data-x%3D%26quot%3B1%20%26%2336%3B%26amp%3B';
    expect(body('Text[^a" data-x="1 $&] and[^<b>].\n\n[^a" data-x="1 $&]: Quote.\n[^<b>]: Tag.\n')).toBe(
      `<p dir="auto">Text${ref(id, 1)} and${ref('%26lt%3Bb%26gt%3B', 2)}.</p>\n` +
        section(
          `<li id="footnote-${id}">\n<p dir="auto">Quote.${back(id, 'a&quot; data-x=&quot;1 &#36;&amp;')}</p>\n</li>\n` +
            `<li id="footnote-%26lt%3Bb%26gt%3B">\n<p dir="auto">Tag.${back('%26lt%3Bb%26gt%3B', '&lt;b&gt;')}</p>\n</li>\n`,
        ),
    );
  });

  it("keeps a heading off every reference's id, the second and later ones too, and writes an apostrophe in a label as &#39;", () => {
    const html = body("Text[^1] and[^1] and[^it's].\n\n## Footnote ref 1 2\n\n[^1]: The note.\n[^it's]: N.\n");
    expect(html).toContain('<h2 dir="auto" id="footnote-ref-1-2-1">Footnote ref 1 2</h2>');
    expect(html.match(/id="footnote-ref-1-2"/g)).toHaveLength(1);
    expect(html).toContain(ref('it%26%2339%3Bs', 2));
  });

  it('prints no list when no note is referenced', () => {
    expect(body('Plain[^none].\n\n[^unused]: Never referenced.\n')).toBe('<p dir="auto">Plain[^none].</p>\n');
  });

  it('takes no bracket into a label, as GitHub: `[^a[b]` is text, and a line of `[^[^[^…` is read once, not once per `[`', () => {
    expect(body('A[^a[b] and[^a].\n\n[^a[b]: Bracket.\n\n[^a]: Note.\n')).toBe(
      `<p dir="auto">A[^a[b] and${ref('a', 1)}.</p>\n<p dir="auto">[^a[b]: Bracket.</p>\n` + section(`<li id="footnote-a">\n<p dir="auto">Note.${back('a', 'a')}</p>\n</li>\n`),
    );
    // Each try read to the end of the line with marked-footnote's labels: 100 KB took 5 s, these 400 KB ~80 s.
    const lengths = runIsolated(`
      const { markdownToHtml } = load('functions/core/render/markdown.ts');
      const opened = '[^'.repeat(200_000), unclosed = 'x[^a'.repeat(100_000) + '\\n\\n[^a]: Note.\\n';
      console.log(JSON.stringify([markdownToHtml(opened, { deadlineMs: 120_000 }).length, markdownToHtml(unclosed, { deadlineMs: 120_000 }).length]));
    `) as number[];
    expect(lengths[0]).toBeGreaterThan(400_000);
    expect(lengths[1]).toBeGreaterThan(400_000);
  });

  it('finds notes by label in linear work: 20,000 notes with 40,000 references search no more per note than 2,000 do', () => {
    // Deadlines far off: the work is counted, not timed, so a loaded machine cannot fail this.
    let html = '';
    const large = searchWork(() => (html = body(manyFootnotes(20_000), { deadlineMs: 120_000 })));
    const small = searchWork(() => body(manyFootnotes(2_000), { deadlineMs: 120_000 }));
    expect(html.match(/<li id="footnote-\d+">/g)).toHaveLength(20_000);
    expect(html).toContain(`Claim 19999${ref('19999', 20_000)} and again${ref('19999', 20_000, '-2')}.`);
    expect(html).toContain(`<li id="footnote-19999">\n<p dir="auto">Note 19999.${back('19999', '19999')}${back('19999', '19999', 2)}</p>\n</li>\n</ol>`);
    // One lookup per reference. Searching every note for every reference (as marked-footnote did) would look
    // through 40,000 × 20,000 elements, and 100 times as many for 10 times the notes.
    expect(large.elementsSearched).toBeLessThan(12 * small.elementsSearched);
    expect(large.elementsSearched).toBeLessThan(100 * 40_000);
    expect(large.mapLookups).toBe(40_000);
    expect(small.mapLookups).toBe(4_000);
  });
});
