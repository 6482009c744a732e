import { runIsolated } from '../../../support/hang-guard';
import { jpeg, png } from '../../../support/images';
import { contentMismatch, looksLikeHtmlDocument, markdownSignalCount, sniffContent } from '../../../../functions/core/render/content-sniffer';

describe('content sniffing', () => {
  it('accepts HTML as HTML and prose as either type', () => {
    expect(contentMismatch('html', '<h1>Hi</h1><p>there</p>')).toBeNull();
    expect(contentMismatch('html', 'Just a sentence.')).toBeNull();
    expect(contentMismatch('markdown', 'Just a sentence.')).toBeNull();
  });

  it('accepts Markdown with inline HTML fragments', () => {
    expect(contentMismatch('markdown', '# Title\n\n<div align="center">centered</div>\n\n- item')).toBeNull();
  });

  it('flags Markdown sent as HTML', () => {
    expect(contentMismatch('html', '# Title\n\n- one\n- two\n\n**bold**')).toBe('markdown');
    // An autolink is not an element.
    expect(contentMismatch('html', '# Title\n\n- one <https://example.com>\n\n**bold**')).toBe('markdown');
  });

  it('flags Markdown sent as HTML only on two kinds of Markdown syntax, each kind counted', () => {
    // One kind alone is no evidence: HTML-less prose may well have a bold word or a list.
    expect(contentMismatch('html', 'Prices are **low** this week.')).toBeNull();
    expect(contentMismatch('html', 'Shopping:\n- apples\n- pears')).toBeNull();
    const kinds = ['```\ncode\n```', '~~~\ncode\n~~~', '1. first', '[docs](https://docs.example/a)', '![](logo.png)', '__bold__', '> quoted', '| a | b |\n| --- | --- |', 'one\n\n***\n\ntwo'];
    for (const sample of kinds) {
      expect([sample, markdownSignalCount(sample)]).toEqual([sample, 1]);
      expect([sample, contentMismatch('html', `# Title\n\n${sample}`)]).toEqual([sample, 'markdown']);
    }
  });

  it('accepts HTML whose only elements are ones it has no list entry for', () => {
    expect(contentMismatch('html', '<u>Price list</u>\n- apples **cheap**\n1. first')).toBeNull();
    expect(contentMismatch('html', '<center><font size=2>Menu</font></center>\n# not a heading\n- item')).toBeNull();
    expect(contentMismatch('html', '<my-widget></my-widget>\n- a\n- **b**')).toBeNull();
  });

  it('accepts Markdown that opens with an indented code block showing HTML', () => {
    expect(contentMismatch('markdown', '    <!DOCTYPE html>\n    <html>\n\n# Hi')).toBeNull();
    expect(contentMismatch('markdown', '\n\t<html>\n\t</html>\n\nText')).toBeNull();
    // Slightly indented (up to three spaces, as in CommonMark), it is still a whole document.
    expect(contentMismatch('markdown', '  <!DOCTYPE html><html><body>x</body></html>')).toBe('html');
    expect(contentMismatch('markdown', '   <!DOCTYPE html><html><body>x</body></html>')).toBe('html');
  });

  it('flags a whole HTML document sent as Markdown', () => {
    expect(contentMismatch('markdown', '<!DOCTYPE html><html><body><p>x</p></body></html>')).toBe('html');
    // Behind a licence comment of a few hundred characters too.
    expect(contentMismatch('markdown', `<!-- ${'Licensed under the Apache License. '.repeat(10)}-->\n<!DOCTYPE html><html><body>x</body></html>`)).toBe('html');
  });

  it('flags PDFs, images, binary data and bare URLs under either type', () => {
    expect(contentMismatch('html', '%PDF-1.7\n...')).toBe('pdf');
    expect(contentMismatch('markdown', 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')).toBe('image');
    expect(contentMismatch('html', 'https://example.com/page.html')).toBe('url');
    expect(sniffContent('\u0000\u0001\u0002\u0003binary\u0004')).toBe('binary');
  });

  it('names raw PNG and JPEG bytes images (not just binary), and short base64-looking words are not images', () => {
    // Image bytes read as Latin-1 text, as a client that reads a file as a string sends them.
    expect(contentMismatch('html', png(4, 4).toString('latin1'))).toBe('image');
    expect(contentMismatch('markdown', jpeg().toString('latin1'))).toBe('image');
    expect(contentMismatch('markdown', '/9j/')).toBeNull();
    expect(contentMismatch('html', 'iVBORw0KGgo')).toBeNull();
  });

  it('takes text with a stray control character for text, and text of more than 1% control characters for binary data', () => {
    const prose = 'A sentence of ordinary prose. '.repeat(40); // 1,200 characters
    expect(contentMismatch('markdown', `${prose}\u0001${prose}`)).toBeNull();
    // 3%: one control character in every 33.
    const noisy = Array.from({ length: 100 }, () => `${'x'.repeat(32)}\u0001`).join('');
    expect(contentMismatch('markdown', noisy)).toBe('binary');
    // The first 8 KB are weighed, not just the opening line: a text preamble does not hide binary data after it.
    expect(contentMismatch('markdown', `${'A line of readable text. '.repeat(8)}\n${noisy}`)).toBe('binary');
  });

  it('takes terminal output with ANSI colour codes for text, not binary data', () => {
    const log = Array.from({ length: 20 }, (_, i) => `\u001b[32mPASS\u001b[0m test ${i}`).join('\n');
    expect(contentMismatch('markdown', `# CI report\n\n\`\`\`\n${log}\n\`\`\`\n`)).toBeNull();
    expect(contentMismatch('html', `<pre>${log}</pre>`)).toBeNull();
    expect(sniffContent(`\u001b\u0000\u0001\u0002\u0003binary\u0004`)).toBe('binary');
  });

  it('finds a whole document behind an XML declaration and comments, and not behind an unclosed comment', () => {
    expect(looksLikeHtmlDocument('  <?xml version="1.0"?>\n<!-- a --> <!----><!DOCTYPE html><p>x')).toBe(true);
    expect(looksLikeHtmlDocument('<!-- a --><HTML lang="en">')).toBe(true);
    expect(looksLikeHtmlDocument('<!-- never closed <html>')).toBe(false);
    expect(looksLikeHtmlDocument('<!--><html>')).toBe(false); // "<!-->" does not close the comment it opens
    expect(looksLikeHtmlDocument('# Title\n<html>')).toBe(false);
  });

  it('sniffs hostile payloads without backtracking (each took seconds to hours with the old patterns)', () => {
    // The shapes that made the old patterns quadratic or worse, in their own process: a hang fails the guard.
    const outcomes = runIsolated(`
      const { contentMismatch, sniffContent } = load('functions/core/render/content-sniffer.ts');
      const hostile = ['<a'.repeat(500_000), '[x'.repeat(500_000), '![x'.repeat(300_000), '[a]('.repeat(250_000), '<!---->'.repeat(2000) + 'x', '<!-- --> '.repeat(2000)];
      console.log(JSON.stringify(hostile.map((h) => [sniffContent(h), contentMismatch('markdown', h)])));
    `) as [string, unknown][];
    expect(outcomes).toHaveLength(6);
    for (const [kind, mismatch] of outcomes) {
      expect(['html', 'markdown', 'text']).toContain(kind);
      expect(mismatch).toBeNull();
    }
  });
});
