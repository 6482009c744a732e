import { attachment, json, pdf, toProxyResult } from '../../../functions/http/responses';

describe('attachment (Content-Disposition)', () => {
  it('gives an ASCII fallback and the UTF-8 form of any name', () => {
    expect(attachment('Grüße "2026".pdf')).toBe(`attachment; filename="Gru_e _2026_.pdf"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%222026%22.pdf`);
  });

  it('never throws on half a surrogate pair (it used to, after the charge)', () => {
    expect(attachment('x\ud800.pdf')).toBe(`attachment; filename="x_.pdf"; filename*=UTF-8''x_.pdf`);
    expect(attachment('😀.pdf')).toContain("filename*=UTF-8''%F0%9F%98%80.pdf");
  });
});

describe('toProxyResult', () => {
  it('tells caches to store nothing: a new API key, a webhook secret or a signed link must not outlive the answer', () => {
    expect(toProxyResult(json(201, { api_key: 'pk_x' }), 'req_1').headers).toMatchObject({ 'Cache-Control': 'no-store', 'X-Request-Id': 'req_1' });
    expect(toProxyResult(pdf(new Uint8Array([37, 80]), {}), 'req_2').headers).toMatchObject({ 'Cache-Control': 'no-store' });
  });
});
