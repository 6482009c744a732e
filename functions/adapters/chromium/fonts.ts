import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FALLBACK_FAMILIES } from '../../core/render/fonts';

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** CSS's generic families and the families documents commonly name, each with the shipped face that stands in for it. */
const FAMILY_CLASSES: { generic: string; face: string; named: string[] }[] = [
  { generic: 'serif', face: 'DejaVu Serif', named: ['Times New Roman', 'Times', 'Liberation Serif', 'Tinos', 'Georgia', 'Cambria', 'Garamond', 'Palatino', 'Book Antiqua'] },
  { generic: 'sans-serif', face: 'DejaVu Sans', named: ['Arial', 'Helvetica', 'Helvetica Neue', 'Liberation Sans', 'Arimo', 'Verdana', 'Tahoma', 'Calibri', 'Segoe UI', 'Roboto', 'system-ui'] },
  { generic: 'monospace', face: 'DejaVu Sans Mono', named: ['Courier New', 'Courier', 'Liberation Mono', 'Cousine', 'Consolas', 'Menlo', 'Monaco'] },
];

/**
 * Chinese, Japanese and Korean system fonts documents commonly name (Windows, macOS, Adobe/Google), by their English
 * and native names, each with the shipped Noto face that stands in for it. Without them such a family fell through to
 * DejaVu Sans and its CJK text to Chromium's per-character fallback, which takes the regular face whatever the weight
 * and only emboldens it; named, the family is the Noto face, so bold text gets its bold face. Japanese names map to SC
 * (no JP face is shipped; SC draws kana and kanji); Song/Mincho (serif) names too, as no serif CJK face is shipped.
 */
const CJK_FAMILIES: { face: (typeof FALLBACK_FAMILIES)[number]; named: string[] }[] = [
  {
    face: 'Noto Sans SC',
    named: [
      'Microsoft YaHei', 'Microsoft YaHei UI', '微软雅黑', 'SimHei', '黑体', 'SimSun', 'NSimSun', '宋体', '新宋体', 'KaiTi', '楷体', 'FangSong', '仿宋',
      'Microsoft JhengHei', '微軟正黑體', 'PMingLiU', 'MingLiU', '新細明體', 'PingFang SC', 'PingFang TC', 'PingFang HK', 'Hiragino Sans GB',
      'Heiti SC', 'Heiti TC', 'STHeiti', 'STSong', 'Songti SC', 'Source Han Sans SC', 'Source Han Sans CN', 'Noto Sans CJK SC', 'Noto Sans CJK TC',
      'Noto Sans TC', 'WenQuanYi Micro Hei', 'WenQuanYi Zen Hei',
      'Meiryo', 'メイリオ', 'Meiryo UI', 'Yu Gothic', '游ゴシック', 'YuGothic', 'Yu Mincho', '游明朝', 'MS Gothic', 'ＭＳ ゴシック', 'MS PGothic', 'ＭＳ Ｐゴシック',
      'MS Mincho', 'ＭＳ 明朝', 'MS PMincho', 'ＭＳ Ｐ明朝', 'MS UI Gothic', 'Hiragino Sans', 'Hiragino Kaku Gothic ProN', 'Hiragino Kaku Gothic Pro',
      'ヒラギノ角ゴ ProN W3', 'ヒラギノ角ゴシック', 'Hiragino Mincho ProN', 'Osaka', 'Noto Sans JP', 'Noto Sans CJK JP', 'Source Han Sans JP', 'IPAGothic',
      'IPAexGothic', 'IPAMincho', 'TakaoGothic',
    ],
  },
  {
    face: 'Noto Sans KR',
    named: [
      'Malgun Gothic', '맑은 고딕', 'Gulim', '굴림', 'Dotum', '돋움', 'Batang', '바탕', 'Gungsuh', '궁서', 'Apple SD Gothic Neo', 'AppleGothic',
      'Nanum Gothic', 'NanumGothic', '나눔고딕', 'Nanum Myeongjo', 'Noto Sans CJK KR', 'Source Han Sans KR', 'Source Han Sans K', 'UnDotum',
    ],
  },
];

/**
 * A fontconfig for Chromium where no system fonts exist (Lambda; the local stack uses the same fonts): the shipped
 * fonts in `fontDir`, plus what @sparticuz/chromium unpacks into /tmp/fonts (Open Sans). Families resolve as a
 * desktop's fontconfig resolves them: CSS's generic families and the common named ones (Times New Roman, Arial,
 * Courier New, …) to the DejaVu face of their class, common CJK system fonts (Microsoft YaHei, Meiryo, Malgun
 * Gothic, …) to the Noto face of their script, and any other family to DejaVu Sans. Without this, text with no
 * font set (Chromium asks for Times New Roman) and every family not shipped printed in Open Sans, and line breaks and
 * page counts differed from a machine with DejaVu. Characters DejaVu lacks fall back to the Noto faces, the fallback
 * families in their order (core/render/fonts.ts), then emoji by coverage. Returns the directory to use as
 * FONTCONFIG_PATH: one per font directory, written whole (several local stacks, each with its own fonts, may launch
 * Chromium at once), in the system temp dir unless `configDir` is given. Its font cache is kept in it: a shared cache
 * dir gained a file for every font directory ever used.
 */
export function writeFontConfig(fontDir: string, configDir = path.join(tmpdir(), `pdf-fontconfig-${createHash('sha256').update(fontDir).digest('hex').slice(0, 16)}`)): string {
  const generics = FAMILY_CLASSES.map(({ generic }) => generic);
  const family = (name: string) => `<family>${escapeXml(name)}</family>`;
  const xml = `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>${escapeXml(fontDir)}</dir>
  <dir>${escapeXml(path.join(tmpdir(), 'fonts'))}</dir>
  <cachedir>${escapeXml(path.join(configDir, 'cache'))}</cachedir>
${FAMILY_CLASSES.flatMap(({ generic, named }) => named.map((name) => `  <alias binding="same">${family(name)}<default>${family(generic)}</default></alias>`)).join('\n')}
${CJK_FAMILIES.flatMap(({ face, named }) => named.map((name) => `  <alias binding="same">${family(name)}<prefer>${family(face)}</prefer></alias>`)).join('\n')}
  <match target="pattern">
${generics.map((generic) => `    <test qual="all" name="family" compare="not_eq"><string>${generic}</string></test>`).join('\n')}
    <edit name="family" mode="append_last"><string>sans-serif</string></edit>
  </match>
${FAMILY_CLASSES.map(({ generic, face }) => `  <alias binding="same">${family(generic)}<prefer>${[face, ...FALLBACK_FAMILIES].map(family).join('')}</prefer></alias>`).join('\n')}
</fontconfig>
`;
  mkdirSync(configDir, { recursive: true });
  const staged = path.join(configDir, `fonts.conf.${process.pid}`);
  writeFileSync(staged, xml);
  renameSync(staged, path.join(configDir, 'fonts.conf'));
  return configDir;
}
