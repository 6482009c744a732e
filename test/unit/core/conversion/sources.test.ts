import { checkImages, urlDocument } from '../../../../functions/core/conversion/sources';
import type { HttpClient } from '../../../../functions/core/net/fetch';
import { png } from '../../../support/images';
import { standardTablesJpeg } from '../../../support/jpeg-build';
import { rejection } from '../../../support/errors';

/** A client that answers every request with `body` as `contentType`, reached at `finalUrl`. */
const serving = (contentType: string, body: string | Buffer, finalUrl: string): HttpClient => ({
  request: async () => ({ status: 200, headers: { 'content-type': contentType }, body: Buffer.from(body), finalUrl, redirects: finalUrl === 'https://example.com/start' ? [] : [finalUrl] }),
});

/** A grey 8×8 Motion-JPEG frame: it names Huffman tables 0 and never defines them. */
const motionJpeg = () => standardTablesJpeg(1, 1, 1, () => new Array(64).fill(0), []);
const definesHuffmanTables = (bytes: Buffer) => bytes.includes(Buffer.from([0xff, 0xc4]));

describe('urlDocument', () => {
  const start = new URL('https://example.com/start');

  it('converts a Markdown answer to HTML and prints an HTML answer as it is', async () => {
    const markdown = await urlDocument(serving('text/markdown', '# Notes\n\n- first', 'https://example.com/start'), start, undefined)();
    expect(markdown.html).toContain('<h1');
    expect(markdown.html).not.toContain('# Notes');
    const html = await urlDocument(serving('text/html', '<p># not a heading</p>', 'https://example.com/start'), start, undefined)();
    expect(html.html).toBe('<p># not a heading</p>');
  });

  it("names the page by the address reached after redirects, not the one asked for, for the footer's url class", async () => {
    const doc = await urlDocument(serving('text/html', '<p>x</p>', 'https://example.com/moved?q=1'), start, undefined)();
    expect(doc.documentUrl).toBe('https://example.com/moved');
  });

  it('prints a usable image, and refuses one that is not with its image code and the URL reached', async () => {
    const ok = await urlDocument(serving('image/png', png(4, 3), 'https://example.com/start'), start, undefined)();
    expect(ok.html).toContain('<img');
    const err = await rejection(urlDocument(serving('image/png', Buffer.from('not a png'), 'https://example.com/pic.png'), start, undefined)());
    expect(err.details).toMatchObject({ url: 'https://example.com/pic.png' });
    expect(err.code).toBe('INVALID_IMAGE_FORMAT');
  });

  it('prints a Motion-JPEG frame with the standard Huffman tables written in', async () => {
    const doc = await urlDocument(serving('image/jpeg', motionJpeg(), 'https://example.com/start'), start, undefined)();
    const printed = Buffer.from(/data:image\/jpeg;base64,([^"]+)/.exec(doc.html)![1], 'base64');
    expect(definesHuffmanTables(printed)).toBe(true);
  });
});

describe('checkImages', () => {
  it('skips unusable images and keeps the usable ones; none usable refuses the request', async () => {
    const checked = await checkImages([
      { filename: 'bad.png', bytes: Buffer.from('nope') },
      { filename: 'good.png', bytes: png(2, 2) },
    ]);
    expect(checked.usable).toHaveLength(1);
    expect(checked.skipped).toMatchObject([{ index: 0, filename: 'bad.png' }]);
    await expect(checkImages([{ filename: 'bad.png', bytes: Buffer.from('nope') }])).rejects.toMatchObject({ code: 'INVALID_IMAGE_FORMAT' });
  });

  it('keeps the bytes to print: a Motion-JPEG frame with the standard Huffman tables written in', async () => {
    const motion = motionJpeg();
    expect(definesHuffmanTables(motion)).toBe(false);
    const checked = await checkImages([{ filename: 'frame.jpg', bytes: motion }]);
    expect(checked.usable).toMatchObject([{ type: 'jpeg' }]);
    expect(definesHuffmanTables(checked.usable[0].bytes)).toBe(true);
  });
});
