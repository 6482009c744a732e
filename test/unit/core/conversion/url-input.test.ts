import { decodeText } from '../../../../functions/core/conversion/url-input';

const doc = (body: Buffer, charset: string | null = null) => ({ kind: 'html' as const, body, contentType: 'text/html', charset, finalUrl: 'https://example.com/' });
const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();

describe('decodeText', () => {
  const page = '<html><body>Grüße</body></html>';

  it('follows a byte-order mark over any declared charset, as browsers do', () => {
    expect(decodeText(doc(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page, 'utf16le')])))).toBe(page);
    expect(decodeText(doc(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(page)]), 'utf-16'))).toBe(page);
    expect(decodeText(doc(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page)]), 'windows-1252'))).toBe(page);
  });

  it('uses the declared charset, then a <meta charset>, then UTF-8', () => {
    expect(decodeText(doc(Buffer.from(page, 'latin1'), 'iso-8859-1'))).toBe(page);
    expect(decodeText(doc(Buffer.from(`<meta charset="windows-1252">${page}`, 'latin1')))).toBe(`<meta charset="windows-1252">${page}`);
    expect(decodeText(doc(Buffer.from(page)))).toBe(page);
  });
});
