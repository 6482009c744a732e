import { copyFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { ChromiumBrowser } from '../../../functions/adapters/chromium/browser';
import { shippedFontFiles, stageFonts } from '../../../functions/adapters/chromium/shipped-fonts';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { markdownToHtml } from '../../../functions/core/render/markdown';
import { parsePdfOptions } from '../../../functions/core/render/options';
import { readPdf } from '../../support/pdf';
import { tempDir } from '../../support/temp';

const DEJAVU = path.resolve(__dirname, '../../../node_modules/dejavu-fonts-ttf/ttf');
/** The fonts a PDF embeds, without their subset prefixes. */
const embeddedFonts = (pdf: Uint8Array) => [...new Set([...Buffer.from(pdf).toString('latin1').matchAll(/\/BaseFont\s*\/(?:[A-Z]{6}\+)?([A-Za-z0-9-]+)/g)].map((m) => m[1]))].sort();

describe('Chromium with shipped fonts (the Lambda layer)', () => {
  /** `html` printed with the shipped fonts only. */
  const printWithShippedFonts = async (html: string) => {
    const home = tempDir('layer-fonts-');
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH, fontDir: stageFonts(shippedFontFiles(), path.join(home, 'fonts')), filesDir: home });
    try {
      return await new ChromiumRenderer(browser).render({ html, options: parsePdfOptions({}), timeoutMs: 20_000 });
    } finally {
      await browser.close();
    }
  };
  /** The fonts a PDF of `html` embeds, printed with the shipped fonts only. */
  const render = async (html: string): Promise<string[]> => embeddedFonts((await printWithShippedFonts(html)).pdf);

  it('ships the regular, bold and italic faces of DejaVu Sans, Serif and Sans Mono, its math face, Noto faces for other scripts, regular and bold, and Noto Color Emoji', () => {
    expect(shippedFontFiles().map((file) => path.basename(file)).sort()).toEqual(
      [
        ...['DejaVuSans', 'DejaVuSans-Bold', 'DejaVuSans-BoldOblique', 'DejaVuSans-Oblique', 'DejaVuSansMono', 'DejaVuSansMono-Bold', 'DejaVuSansMono-BoldOblique', 'DejaVuSansMono-Oblique', 'DejaVuSerif', 'DejaVuSerif-Bold', 'DejaVuSerif-BoldItalic', 'DejaVuSerif-Italic'],
        'DejaVuMathTeXGyre',
        ...['SC', 'KR', 'Devanagari', 'Bengali', 'Tamil', 'Thai'].flatMap((script) => [`NotoSans${script}_400Regular`, `NotoSans${script}_700Bold`]),
        'NotoColorEmoji_400Regular',
      ]
        .map((f) => `${f}.ttf`)
        .sort(),
    );
    expect(readdirSync(stageFonts(shippedFontFiles(), path.join(tempDir('layer-fonts-'), 'fonts'))).length).toBe(26);
  });

  it('prints Chinese, Japanese, Korean, Hindi, Bengali, Tamil and Thai text in the Noto faces (DejaVu has no such glyphs: they printed as empty boxes)', async () => {
    const shipped = await render('<p>Invoice 发票 請求書のご案内 청구서</p><p style="font-weight:bold">合计 합계</p><p>चालान চালান விலைப்பட்டியல் ใบแจ้งหนี้</p>');
    // Latin text with no font set prints in DejaVu Sans, as with a desktop's fontconfig (it printed in Open Sans).
    expect(shipped).toEqual(expect.arrayContaining(['DejaVuSans', 'NotoSansSC-Regular', 'NotoSansKR-Regular', 'NotoSansDevanagari-Regular', 'NotoSansBengali-Regular', 'NotoSansTamil-Regular', 'NotoSansThai-Regular']));
    expect(shipped).not.toContain('OpenSans-Regular'); // nothing fell through to the last resort
  });

  /** Every RGB fill a PDF's streams set: Chromium draws colour glyphs as vector paths filled in their colours. */
  const fillColours = (pdf: Uint8Array) => {
    const colours = new Set<string>();
    for (const [, stream] of Buffer.from(pdf).toString('latin1').matchAll(/stream\r?\n([\s\S]*?)endstream/g)) {
      let text: string;
      try {
        text = inflateSync(Buffer.from(stream, 'latin1')).toString('latin1');
      } catch {
        continue; // not a Flate stream (a font file, say)
      }
      for (const [, rgb] of text.matchAll(/(?:^|\s)([\d.]+ [\d.]+ [\d.]+) (?:rg|sc|scn)\b/g)) colours.add(rgb);
    }
    return colours;
  };

  /** The page content streams of a PDF (those drawing text), inflated. */
  const textStreams = (pdf: Uint8Array) =>
    [...Buffer.from(pdf).toString('latin1').matchAll(/stream\r?\n([\s\S]*?)endstream/g)]
      .map(([, stream]) => {
        try {
          return inflateSync(Buffer.from(stream, 'latin1')).toString('latin1');
        } catch {
          return '';
        }
      })
      .filter((text) => /\bBT\b/.test(text));

  it('prints emoji in colour (DejaVu has a few, in black; most printed as empty boxes)', async () => {
    const { pdf } = await printWithShippedFonts('<p style="font-size:40px">😀 🇫🇷</p>');
    expect(fillColours(pdf).size).toBeGreaterThan(3); // the smiley's yellows and browns, the flag's blue, white and red
  });

  it('prints the emoji DejaVu Sans has (😀 😂 ⚡ ☕ ♈) in colour in HTML set in it (they printed in black); symbols that are text by default (✔ ☺ ★) stay DejaVu', async () => {
    const { pdf } = await printWithShippedFonts('<p style="font-size:40px">😀 😂 ⚡ ☕ ♈</p>');
    expect(fillColours(pdf).size).toBeGreaterThan(3); // drawn as coloured paths, not in a font
    expect(await render('<p style="font-family: DejaVu Sans">✔ ☺ ★ ☀</p>')).toEqual(['DejaVuSans']);
  });

  it('lays text out exactly as the unmodified DejaVu faces do (only their emoji are taken out)', async () => {
    const text = '<h1>Invoice № 42 — “Quarterly” ﬁnance</h1><p>Tax ∑ 1,234.56 € · Привет · Ελληνικά · שלום · مرحبا</p><pre>const total = items.reduce((a, b) => a + b, 0);</pre><p style="font-family: serif"><b>Bold</b> <i>italic</i> AV Wa Ty</p>';
    const original = tempDir('layer-fonts-');
    for (const file of shippedFontFiles()) copyFileSync(file, path.join(original, path.basename(file)));
    const print = async (fontDir: string) => {
      const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH, fontDir, filesDir: tempDir('chromium-files-') });
      try {
        return (await new ChromiumRenderer(browser).render({ html: text, options: parsePdfOptions({}), timeoutMs: 20_000 })).pdf;
      } finally {
        await browser.close();
      }
    };
    const shippedDir = stageFonts(shippedFontFiles(), path.join(tempDir('layer-fonts-'), 'fonts'));
    // Glyph ids and metrics are kept, so the pages draw the same glyphs at the same places: equal content streams.
    const [before, after] = await Promise.all([print(original), print(shippedDir)]);
    expect(textStreams(after)).toEqual(textStreams(before));
    expect(textStreams(after).join('')).toContain('Tj');
  });

  it("typesets Markdown's math with the shipped math face, as formulas rather than TeX source", async () => {
    const { pdf } = await printWithShippedFonts(markdownToHtml('Area $A = \\pi r^2$ of a circle, $x \\in \\mathbb{R}$.\n\n$$\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n$$\n'));
    expect(embeddedFonts(pdf)).toContain('DejaVuMathTeXGyre-Regular');
    const [page] = await readPdf(pdf);
    expect(page.text).toContain('𝐴 = 𝜋 𝑟 2'); // Chromium sets single-letter identifiers in mathematical italic
    expect(page.text).toContain('𝑥 ∈ ℝ');
    expect(page.text).not.toMatch(/\\(pi|sum|frac)/); // neither printed as source nor left in a visible annotation
  });

  it('prints the smileys DejaVu Sans draws itself (😀 😂 😉) in colour in Markdown: they printed in black', async () => {
    const { pdf } = await printWithShippedFonts(markdownToHtml('# 😀 😂 😉\n\nText 😀'));
    expect(fillColours(pdf).size).toBeGreaterThan(3); // yellows and browns, not the text's one colour
  });

  it('prints emoji sequences in Markdown as one emoji each: 👨‍👩‍👧 is one family, 🏴󠁧󠁢󠁳󠁣󠁴󠁿 the Scottish flag (they split into three people and a black flag)', async () => {
    // Each sequence's printed width in emoji: 1 when it is drawn as one glyph. The joiners and tag characters were
    // outside the Markdown emoji face's range, so they came from another face and broke the sequence apart.
    const sequences = ['👨‍👩‍👧', '👩🏽‍💻', '🏳️‍🌈', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '1️⃣'];
    const spans = sequences.map((emoji, i) => `<span id="s${i}">${emoji}</span>`).join(' ');
    const script = `<p id="widths"></p><script>const one = document.getElementById('one').getBoundingClientRect().width;
      widths.textContent = [${sequences.map((_, i) => `s${i}`).join(', ')}].map((s) => Math.round(s.getBoundingClientRect().width / one)).join(' ');</script>`;
    const { pdf } = await printWithShippedFonts(markdownToHtml(`# Emoji\n\n<span id="one">👨</span> ${spans}\n\n${script}\n`));
    expect((await readPdf(pdf))[0].text).toContain('1 1 1 1 1');
  });

  it('prints kanji and Chinese without a lang attribute in Noto Sans SC, Hangul in KR (KR drew Japanese in Korean forms, and a Chinese sentence in both faces)', async () => {
    expect(await render('<p>吾輩は猫である。名前はまだ無い。</p><p>中国人民银行发布了新的报告。</p>')).toEqual(['NotoSansSC-Regular']);
    expect(await render('<p>청구서</p>')).toEqual(['NotoSansKR-Regular']);
  });

  it("prints bold Chinese and Korean in Markdown with the Noto bold faces (its stylesheet names them; a fallback face is only emboldened)", async () => {
    expect(await render(markdownToHtml('**合计** **합계** plain 文本 텍스트'))).toEqual(expect.arrayContaining(['NotoSansSC-Bold', 'NotoSansKR-Bold', 'NotoSansSC-Regular', 'NotoSansKR-Regular']));
  });

  it('prints bold Chinese, Japanese and Korean in HTML naming a common CJK font (Microsoft YaHei, Meiryo, Malgun Gothic …) with the Noto bold faces: they stood in for those names (the fallback was only emboldened)', async () => {
    const html = [
      `<p style="font-family: 'Microsoft YaHei', 'PingFang SC', sans-serif"><b>合计</b> 文本</p>`,
      `<p style="font-family: Meiryo, 'Hiragino Kaku Gothic ProN', sans-serif"><b>請求書</b> です</p>`,
      `<p style="font-family: 'Malgun Gothic', 'Apple SD Gothic Neo', sans-serif"><b>합계</b> 텍스트</p>`,
      `<p style="font-family: '微软雅黑'"><b>发票</b></p>`,
    ].join('');
    expect(await render(html)).toEqual(['NotoSansKR-Bold', 'NotoSansKR-Regular', 'NotoSansSC-Bold', 'NotoSansSC-Regular']);
  });

  it('prints only with the fonts it was given, generic families mapped to them', async () => {
    // Only two faces: what the host has (DejaVu Sans among them) must not be used.
    const fontDir = tempDir('layer-fonts-');
    for (const file of ['DejaVuSansMono.ttf', 'DejaVuSerif.ttf']) copyFileSync(path.join(DEJAVU, file), path.join(fontDir, file));
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH, fontDir, filesDir: tempDir('chromium-files-') });
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
