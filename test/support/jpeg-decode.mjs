// Decodes JPEGs with pdf.js, from stdin, and prints JSON. A separate process because pdfjs-dist is an ES module that
// jest's CommonJS loader cannot load. The mode is the first argument:
// - `jpeg`: the JPEG decoded by pdf.js's own decoder (the one it draws DCTDecode images with):
//   {width, height, components, pixels (base64, the components interleaved)}, or {error};
// - `pdf`: every image the PDF's pages paint, as pdf.js decodes them to draw them: {images:[{width, height, kind,
//   pixels (base64)}]} (kind is pdf.js's ImageKind: 1 grey 1-bit, 2 RGB, 3 RGBA); an image pdf.js cannot decode
//   it leaves out, as it does when drawing.
import { JpegImage } from 'pdfjs-dist/image_decoders/pdf.image_decoders.mjs';
import { OPS, getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const base64 = (array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString('base64');

function decodeJpeg(bytes) {
  try {
    const jpeg = new JpegImage();
    jpeg.parse(bytes);
    const { width, height, numComponents: components } = jpeg;
    return { width, height, components, pixels: base64(jpeg.getData({ width, height })) };
  } catch (err) {
    return { error: String(err?.message ?? err) };
  }
}

async function pdfImages(bytes) {
  // Without OffscreenCanvas or ImageDecoder, pdf.js hands over every image as its decoded pixels.
  const doc = await getDocument({ data: bytes, verbosity: 0, isOffscreenCanvasSupported: false, isImageDecoderSupported: false }).promise;
  const images = [];
  for (let i = 1; i <= doc.numPages; i++) {
    const page = await doc.getPage(i);
    const { fnArray, argsArray } = await page.getOperatorList();
    for (const [k, fn] of fnArray.entries()) {
      if (fn !== OPS.paintImageXObject) continue;
      const id = argsArray[k][0];
      const image = await new Promise((resolve) => (id.startsWith('g_') ? page.commonObjs : page.objs).get(id, resolve));
      if (image?.data) images.push({ width: image.width, height: image.height, kind: image.kind, pixels: base64(image.data) });
    }
  }
  return { images };
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const bytes = new Uint8Array(Buffer.concat(chunks));
process.stdout.write(JSON.stringify(process.argv[2] === 'pdf' ? await pdfImages(bytes) : decodeJpeg(bytes)));
