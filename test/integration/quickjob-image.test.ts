import { errorOf } from '../support/errors';
import { MM_PER_POINT, readPdf, readPdfDrawing } from '../support/pdf';
import { GIF, arithmeticJpeg, jpeg, multipart, png } from '../support/images';
import { type TableName, everySymbolBlocks, standardTablesJpeg } from '../support/jpeg-build';
import { decodeJpeg, pdfImages } from '../support/jpeg-read';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account({ credits_usd: 5 });
});
afterAll(() => stack?.stop());

type Field = Parameters<typeof multipart>[0][number];
const image = (bytes: Buffer, filename: string, type = 'image/png'): Field => ({ name: 'images', value: bytes, filename, type });

function send(fields: Field[], key = user.api_key) {
  const { body, contentType } = multipart(fields);
  return stack.request('POST', '/quickjob', { key, body, headers: { 'Content-Type': contentType } });
}


describe('POST /quickjob with images (multipart)', () => {
  it('puts each image on its own A4 page', async () => {
    const res = await send([{ name: 'input_type', value: 'image' }, image(png(400, 300), 'a.png'), image(jpeg(), 'b.jpg', 'image/jpeg')]);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('2');
    const pages = await readPdf(new Uint8Array(await res.arrayBuffer()));
    expect(pages).toHaveLength(2);
    for (const p of pages) {
      expect(p.width * MM_PER_POINT).toBeCloseTo(210, 0);
      expect(p.height * MM_PER_POINT).toBeCloseTo(297, 0);
    }
    const job = await (await stack.request('GET', `/jobs/${res.headers.get('x-job-id')}`, { key: user.api_key })).json();
    expect(job).toMatchObject({ mode: 'image', pages: 2, status: 'completed' });
  });

  it('applies format, landscape, the margin and every fit', async () => {
    // Letter landscape with a 5 mm top margin and the default 10 mm on the other sides; a 50×90 image (taller than wide).
    const [pageW, pageH] = [11 * 72, 8.5 * 72];
    const box = { left: 10 / MM_PER_POINT, right: pageW - 10 / MM_PER_POINT, top: pageH - 5 / MM_PER_POINT, bottom: 10 / MM_PER_POINT };
    const boxW = box.right - box.left;
    const boxH = box.top - box.bottom;
    const centre = { x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2 };
    /** Within 1.5 pt (Chromium lays out in whole CSS pixels of 0.75 pt; the margins differ by 14 pt); a failure shows `what` and the value. */
    const near = (what: string, actual: number, expected: number) => expect({ [what]: Math.abs(actual - expected) <= 1.5 ? expected : actual }).toEqual({ [what]: expected });
    const drawn: Record<string, { x: number; y: number; width: number; height: number }> = {};
    for (const fit of ['contain', 'cover', 'fill', 'none']) {
      const res = await send([{ name: 'input_type', value: 'image' }, { name: 'options', value: JSON.stringify({ format: 'Letter', landscape: true, fit, margin: { top: '5mm' } }) }, image(png(50, 90), 'tall.png')]);
      expect(res.status).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const [page] = await readPdf(bytes);
      expect(page.width).toBeCloseTo(pageW, 0);
      expect(page.height).toBeCloseTo(pageH, 0);
      const [{ images }] = await readPdfDrawing(bytes);
      expect(images).toHaveLength(1);
      drawn[fit] = images[0];
    }
    // fill: stretched over exactly the area inside the margins.
    near('fill x', drawn.fill.x, box.left);
    near('fill width', drawn.fill.width, boxW);
    near('fill top', drawn.fill.y + drawn.fill.height, box.top);
    near('fill bottom', drawn.fill.y, box.bottom);
    // contain: the whole image in proportion, as tall as the area, centred across it.
    near('contain top', drawn.contain.y + drawn.contain.height, box.top);
    near('contain height', drawn.contain.height, boxH);
    near('contain width', drawn.contain.width, (boxH * 50) / 90);
    near('contain centre', drawn.contain.x + drawn.contain.width / 2, centre.x);
    // cover: as wide as the area and taller than it (cropped top and bottom), centred on it.
    near('cover x', drawn.cover.x, box.left);
    near('cover width', drawn.cover.width, boxW);
    expect(drawn.cover.height).toBeGreaterThan(boxH + 1);
    near('cover centre', drawn.cover.y + drawn.cover.height / 2, centre.y);
    // none: natural size (50×90 CSS pixels of 0.75 pt), centred.
    near('none width', drawn.none.width, 50 * 0.75);
    near('none height', drawn.none.height, 90 * 0.75);
    near('none centre x', drawn.none.x + drawn.none.width / 2, centre.x);
    near('none centre y', drawn.none.y + drawn.none.height / 2, centre.y);
  });

  it('prints a Motion-JPEG frame (Huffman tables named, never defined) as a JPEG pdf.js decodes to its pixels', async () => {
    // Chromium draws it with the standard tables and copies its bytes into the PDF, where pdf.js drew nothing.
    const blocks = everySymbolBlocks(32);
    const picture = (tables?: TableName[]) => standardTablesJpeg(8, 4, 3, (component, block) => blocks[(block + 5 * component) % 32], tables);
    const res = await send([{ name: 'input_type', value: 'image' }, image(picture([]), 'frame.jpg', 'image/jpeg')]);
    expect(res.status).toBe(200);
    const images = await pdfImages(new Uint8Array(await res.arrayBuffer()));
    expect(images.map(({ width, height, kind }) => ({ width, height, kind }))).toEqual([{ width: 64, height: 32, kind: 2 }]);
    expect(images[0].pixels.equals((await decodeJpeg(picture())).pixels)).toBe(true);
  });

  it('skips unusable images and counts only the included ones', async () => {
    const broken = png(20, 20).subarray(0, 60);
    const res = await send([{ name: 'input_type', value: 'image' }, image(GIF, 'x.gif', 'image/gif'), image(png(20, 20), 'ok.png'), image(broken, 'broken.png')]);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('1');
  });

  it('stores the result when store is "true"', async () => {
    const res = await send([{ name: 'input_type', value: 'image' }, { name: 'store', value: 'true' }, image(png(20, 20), 'ok.png')]);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ pages: 1, truncated: false });
    expect((await fetch(body.download_url)).status).toBe(200);
  });

  it.each<[string, number, string, Field[]]>([
    ['no images', 400, 'MISSING_IMAGES', [{ name: 'input_type', value: 'image' }]],
    ['only a GIF', 400, 'INVALID_IMAGE_FORMAT', [{ name: 'input_type', value: 'image' }, image(GIF, 'x.gif', 'image/gif')]],
    ['a PNG named .jpg holding text', 400, 'INVALID_IMAGE_FORMAT', [{ name: 'input_type', value: 'image' }, image(Buffer.from('hello'), 'x.jpg', 'image/jpeg')]],
    ['only a corrupt PNG', 400, 'INVALID_IMAGE_DATA', [{ name: 'input_type', value: 'image' }, image(png(20, 20).subarray(0, 60), 'c.png')]],
    ['only an arithmetic-coded JPEG (Chromium prints it blank)', 400, 'INVALID_IMAGE_DATA', [{ name: 'input_type', value: 'image' }, image(arithmeticJpeg(), 'a.jpg', 'image/jpeg')]],
    ['only a huge PNG', 400, 'IMAGE_TOO_LARGE', [{ name: 'input_type', value: 'image' }, image(png(10_001, 2), 'huge.png')]],
    ['options not JSON', 400, 'INVALID_OPTIONS_JSON', [{ name: 'input_type', value: 'image' }, { name: 'options', value: '{fit:' }, image(png(2, 2), 'a.png')]],
    ['unknown fit', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'image' }, { name: 'options', value: '{"fit":"zoom"}' }, image(png(2, 2), 'a.png')]],
    ['no input_type', 400, 'MISSING_INPUT_TYPE', [image(png(2, 2), 'a.png')]],
    ['html as multipart', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'html' }, { name: 'html', value: '<p>x</p>' }]],
    ['26 images', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'image' }, ...Array.from({ length: 26 }, (_, i) => image(png(2, 2), `${i}.png`))]],
    ['40 images', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'image' }, ...Array.from({ length: 40 }, (_, i) => image(png(2, 2), `${i}.png`))]],
  ])('%s → %d %s', async (_name, status, code, fields) => {
    expect(await errorOf(await send(fields))).toMatchObject({ status, code });
  });

  it('refuses an account that cannot pay before decoding any image (decoding 25 large images costs seconds)', async () => {
    const broke = await stack.account({ credits_usd: 0 });
    const res = await send([{ name: 'input_type', value: 'image' }, image(png(20, 20).subarray(0, 60), 'corrupt.png')], broke.api_key);
    expect(await errorOf(res)).toMatchObject({ status: 403, code: 'INSUFFICIENT_CREDITS' });
  });

  it('refuses more than about 4.5 MB of images with 413', async () => {
    const big = Buffer.alloc(1_600_000, 7); // 3 × 1.6 MB: under the 6 MB request cap, over the image budget
    const res = await send([{ name: 'input_type', value: 'image' }, image(big, 'a.png'), image(big, 'b.png'), image(big, 'c.png')]);
    expect(await errorOf(res)).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses a malformed multipart body', async () => {
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, body: '--nope\r\ngarbage', headers: { 'Content-Type': 'multipart/form-data; boundary=xyz' } });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: 'INVALID_MULTIPART' });
  });
});
