import { contentTypeFor } from '../../../../functions/core/render/content-types';

describe('contentTypeFor', () => {
  it('types a bundle file by its extension, whatever its case', () => {
    expect(contentTypeFor('img/logo.PNG')).toBe('image/png');
    expect(contentTypeFor('fonts/Inter.woff2')).toBe('font/woff2');
    expect(contentTypeFor('docs/readme.md')).toBe('text/markdown; charset=utf-8');
    expect(contentTypeFor('archive.tar.pdf')).toBe('application/pdf');
  });

  it('names no charset for stylesheets and scripts, so their byte-order mark or @charset decides', () => {
    expect(contentTypeFor('css/site.css')).toBe('text/css');
    expect(contentTypeFor('js/app.mjs')).toBe('text/javascript');
  });

  it('serves as application/octet-stream (never run as script or stylesheet) what it cannot name', () => {
    expect(contentTypeFor('data.bin')).toBe('application/octet-stream');
    expect(contentTypeFor('Makefile')).toBe('application/octet-stream');
    // The extension is the file name's, not a folder's; a dot file has none.
    expect(contentTypeFor('styles.css/theme')).toBe('application/octet-stream');
    expect(contentTypeFor('assets/.css')).toBe('application/octet-stream');
    expect(contentTypeFor('script.js.')).toBe('application/octet-stream');
  });
});
