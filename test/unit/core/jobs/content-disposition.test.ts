import { contentDisposition } from '../../../../functions/core/jobs/content-disposition';

/** RFC 5987 ext-value with UTF-8 and no language: only attr-char and %XX may follow `UTF-8''`. */
const EXT_VALUE = /^UTF-8''(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-F]{2})*$/;

function parts(header: string) {
  const m = /^(inline|attachment); filename="([^"\\]*)"; filename\*=(.*)$/.exec(header);
  if (!m) throw new Error(`malformed: ${header}`);
  return { kind: m[1], ascii: m[2], extended: m[3] };
}

describe('contentDisposition', () => {
  const name = "O'Brien (final) *draft* Grüße \ud800 😀.pdf";

  it("escapes ' ( ) * and everything else RFC 5987 does not allow, keeping the name recoverable", () => {
    const header = contentDisposition('attachment', name);
    const { kind, ascii, extended } = parts(header);
    expect(kind).toBe('attachment');
    expect(extended).toMatch(EXT_VALUE);
    expect(extended).toBe("UTF-8''O%27Brien%20%28final%29%20%2Adraft%2A%20Gr%C3%BC%C3%9Fe%20_%20%F0%9F%98%80.pdf");
    // The lone surrogate is not text; it became `_`, the rest decodes back to the name.
    expect(decodeURIComponent(extended.slice("UTF-8''".length))).toBe(name.replace('\ud800', '_'));
    // The quoted fallback is printable ASCII without quotes or backslashes.
    expect(ascii).toBe("O'Brien (final) *draft* Gru_e _ _.pdf");
  });

  it('keeps the ASCII fallback and the UTF-8 form for quotes and umlauts', () => {
    expect(contentDisposition('attachment', 'Grüße "2026".pdf')).toBe(`attachment; filename="Gru_e _2026_.pdf"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%222026%22.pdf`);
    expect(contentDisposition('inline', 'a\\b.pdf')).toBe(`inline; filename="a_b.pdf"; filename*=UTF-8''a%5Cb.pdf`);
  });

  it('drops accents from the ASCII fallback and writes one _ per other character, an emoji included', () => {
    expect(parts(contentDisposition('attachment', 'Café crème Ångström.pdf')).ascii).toBe('Cafe creme Angstrom.pdf');
    expect(parts(contentDisposition('attachment', '日本 😀 ﬁle.pdf')).ascii).toBe('__ _ file.pdf');
  });

  it('never throws on half a surrogate pair, at either end', () => {
    expect(contentDisposition('inline', '\udc00x\ud800')).toBe(`inline; filename="_x_"; filename*=UTF-8''_x_`);
  });
});
