import { execFile } from 'node:child_process';
import path from 'node:path';

export interface DecodedJpeg {
  width: number;
  height: number;
  components: number;
  /** The decoded samples, components interleaved (RGB for a colour JPEG). */
  pixels: Buffer;
}

export interface PdfImage {
  width: number;
  height: number;
  /** pdf.js's ImageKind: 1 grey 1-bit, 2 RGB, 3 RGBA. */
  kind: number;
  pixels: Buffer;
}

/** Runs jpeg-decode.mjs (pdf.js, an ES module, in its own process) in one of its modes. */
function runJpegScript<T>(mode: 'jpeg' | 'pdf', bytes: Uint8Array): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [path.join(__dirname, 'jpeg-decode.mjs'), mode], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`jpeg-decode.mjs ${mode} failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout));
    });
    child.stdin!.end(Buffer.from(bytes));
  });
}

/** A JPEG decoded by pdf.js's decoder, the one it draws a PDF's JPEG images with; rejects with its error when it cannot. */
export async function decodeJpeg(bytes: Uint8Array): Promise<DecodedJpeg> {
  const decoded = await runJpegScript<{ error?: string; width: number; height: number; components: number; pixels: string }>('jpeg', bytes);
  if (decoded.error) throw new Error(`pdf.js cannot decode the JPEG: ${decoded.error}`);
  return { ...decoded, pixels: Buffer.from(decoded.pixels, 'base64') };
}

/** Every image a PDF's pages paint, decoded by pdf.js as it draws them; one it cannot decode is missing, as on screen. */
export async function pdfImages(bytes: Uint8Array): Promise<PdfImage[]> {
  const { images } = await runJpegScript<{ images: (Omit<PdfImage, 'pixels'> & { pixels: string })[] }>('pdf', bytes);
  return images.map((image) => ({ ...image, pixels: Buffer.from(image.pixels, 'base64') }));
}
