import { runIsolated } from '../../../support/hang-guard';
import { contentMismatch, looksLikeHtmlDocument, sniffContent } from '../../../../functions/core/render/content-sniffer';

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

  it('accepts HTML whose only elements are ones it has no list entry for', () => {
    expect(contentMismatch('html', '<u>Price list</u>\n- apples **cheap**\n1. first')).toBeNull();
    expect(contentMismatch('html', '<center><font size=2>Menu</font></center>\n# not a heading\n- item')).toBeNull();
    expect(contentMismatch('html', '<my-widget></my-widget>\n- a\n- **b**')).toBeNull();
  });

  it('accepts Markdown that opens with an indented code block showing HTML', () => {
    expect(contentMismatch('markdown', '    <!DOCTYPE html>\n    <html>\n\n# Hi')).toBeNull();
    expect(contentMismatch('markdown', '\n\t<html>\n\t</html>\n\nText')).toBeNull();
    // Slightly indented, it is still a whole document.
    expect(contentMismatch('markdown', '  <!DOCTYPE html><html><body>x</body></html>')).toBe('html');
  });

  it('flags a whole HTML document sent as Markdown', () => {
    expect(contentMismatch('markdown', '<!DOCTYPE html><html><body><p>x</p></body></html>')).toBe('html');
  });

  it('flags PDFs, images, binary data and bare URLs under either type', () => {
    expect(contentMismatch('html', '%PDF-1.7\n...')).toBe('pdf');
    expect(contentMismatch('markdown', 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')).toBe('image');
    expect(contentMismatch('html', 'https://example.com/page.html')).toBe('url');
    expect(sniffContent('\u0000\u0001\u0002\u0003binary\u0004')).toBe('binary');
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
