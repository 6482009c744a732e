import { execFile } from 'node:child_process';
import path from 'node:path';

export interface PdfPageInfo {
  width: number;
  height: number;
  rotate: number;
  text: string;
}

/** Page sizes (points) and text of every page, read by pdfjs in a child process. */
export function readPdf(bytes: Uint8Array): Promise<PdfPageInfo[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [path.join(__dirname, 'pdf-text.mjs')], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`pdf-text failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout).pages);
    });
    child.stdin!.end(Buffer.from(bytes));
  });
}

export const MM_PER_POINT = 25.4 / 72;
