import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { shippedFontFiles, stageFonts } from '../../../functions/adapters/chromium/shipped-fonts';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { markdownToHtml } from '../../../functions/core/render/markdown';
import { parsePdfOptions } from '../../../functions/core/render/options';

const DEJAVU = path.resolve(__dirname, '../../../node_modules/dejavu-fonts-ttf/ttf');
/** The fonts a PDF embeds, without their subset prefixes. */
const embeddedFonts = (pdf: Uint8Array) => [...new Set([...Buffer.from(pdf).toString('latin1').matchAll(/\/BaseFont\s*\/(?:[A-Z]{6}\+)?([A-Za-z0-9-]+)/g)].map((m) => m[1]))].sort();

describe('Chromium with shipped fonts (the Lambda layer)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** The fonts a PDF of `html` embeds, printed with the shipped fonts only. */
  const render = async (html: string): Promise<string[]> => {
    const home = mkdtempSync(path.join(tmpdir(), 'layer-fonts-'));
    dirs.push(home);
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH, fontDir: stageFonts(shippedFontFiles(), path.join(home, 'fonts')) });
    try {
      return embeddedFonts((await new ChromiumRenderer(browser).render({ html, options: parsePdfOptions({}), timeoutMs: 20_000 })).pdf);
    } finally {
      await browser.close();
    }
  };

  it('ships the regular, bold and italic faces of DejaVu Sans, Serif and Sans Mono, and Noto faces for other scripts, regular and bold', () => {
    expect(shippedFontFiles().map((file) => path.basename(file)).sort()).toEqual(
      [
        ...['DejaVuSans', 'DejaVuSans-Bold', 'DejaVuSans-BoldOblique', 'DejaVuSans-Oblique', 'DejaVuSansMono', 'DejaVuSansMono-Bold', 'DejaVuSansMono-BoldOblique', 'DejaVuSansMono-Oblique', 'DejaVuSerif', 'DejaVuSerif-Bold', 'DejaVuSerif-BoldItalic', 'DejaVuSerif-Italic'],
        ...['SC', 'KR', 'Devanagari', 'Bengali', 'Tamil', 'Thai'].flatMap((script) => [`NotoSans${script}_400Regular`, `NotoSans${script}_700Bold`]),
      ]
        .map((f) => `${f}.ttf`)
        .sort(),
    );
    expect(readdirSync(stageFonts(shippedFontFiles(), path.join(mkdtempSync(path.join(tmpdir(), 'layer-fonts-')), 'fonts'))).length).toBe(24);
  });

  it('prints Chinese, Japanese, Korean, Hindi, Bengali, Tamil and Thai text in the Noto faces (DejaVu has no such glyphs: they printed as empty boxes)', async () => {
    const shipped = await render('<p>Invoice 发票 請求書のご案内 청구서</p><p style="font-weight:bold">合计 합계</p><p>चालान চালান விலைப்பட்டியல் ใบแจ้งหนี้</p>');
    // Latin text with no font set prints in DejaVu Sans, as with a desktop's fontconfig (it printed in Open Sans).
    expect(shipped).toEqual(expect.arrayContaining(['DejaVuSans', 'NotoSansSC-Regular', 'NotoSansKR-Regular', 'NotoSansDevanagari-Regular', 'NotoSansBengali-Regular', 'NotoSansTamil-Regular', 'NotoSansThai-Regular']));
    expect(shipped).not.toContain('OpenSans-Regular'); // nothing fell through to the last resort
  });

  it("prints bold Chinese and Korean in Markdown with the Noto bold faces (its stylesheet names them; a fallback face is only emboldened)", async () => {
    expect(await render(markdownToHtml('**合计** **합계** plain 文本 텍스트'))).toEqual(expect.arrayContaining(['NotoSansSC-Bold', 'NotoSansKR-Bold', 'NotoSansSC-Regular', 'NotoSansKR-Regular']));
  });

  it('prints only with the fonts it was given, generic families mapped to them', async () => {
    // Only two faces: what the host has (DejaVu Sans among them) must not be used.
    const fontDir = mkdtempSync(path.join(tmpdir(), 'layer-fonts-'));
    dirs.push(fontDir);
    for (const file of ['DejaVuSansMono.ttf', 'DejaVuSerif.ttf']) copyFileSync(path.join(DEJAVU, file), path.join(fontDir, file));
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH, fontDir });
    try {
      const { pdf } = await new ChromiumRenderer(browser).render({
        html: '<p style="font-family: serif">serif text</p><pre>const code = 1;</pre><p style="font-family: sans-serif, Arial">sans text</p>',
        options: parsePdfOptions({}),
        timeoutMs: 20_000,
      });
      const fonts = embeddedFonts(pdf);
      expect(fonts).toEqual(expect.arrayContaining(['DejaVuSansMono', 'DejaVuSerif']));
      // The host's DejaVu Sans would print the sans-serif paragraph; here it falls back to a face the config names
      // (Open Sans, which @sparticuz/chromium unpacks into /tmp/fonts beside its binary, or one of the two).
      expect(fonts).not.toContain('DejaVuSans');
      expect(fonts.filter((f) => !['DejaVuSansMono', 'DejaVuSerif', 'OpenSans-Regular'].includes(f))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
