import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';

/** The DejaVu faces shipped (regular, bold, italic of sans, serif and mono: what the default stylesheets use). */
const DEJAVU_FACE = /^DejaVu(Sans|Serif|SansMono)(-(Bold|Oblique|BoldOblique|Italic|BoldItalic))?\.ttf$/;

/** A package's directory in node_modules (wherever npm placed it). */
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

/**
 * Noto faces (regular and bold) for scripts DejaVu lacks, which Chromium falls back to for such text (it printed as
 * empty boxes): SC covers Chinese and Japanese (kana and kanji), KR Korean; then Devanagari (Hindi, Marathi, Nepali),
 * Bengali, Tamil and Thai. Each is the npm package @expo-google-fonts/noto-sans-<name>.
 */
const NOTO_FACES = ['NotoSansSC', 'NotoSansKR', 'NotoSansDevanagari', 'NotoSansBengali', 'NotoSansTamil', 'NotoSansThai'];

/**
 * The faces Chromium prints with in AWS (the render layer's /opt/fonts) and in the local stack, as files in
 * node_modules: DejaVu Sans, Serif and Sans Mono (CSS's generic families; Latin, Greek, Cyrillic, Hebrew, Arabic), the
 * Noto faces above and Noto Color Emoji. Build and local start only: Lambda code finds the fonts in the layer.
 */
export function shippedFontFiles(): string[] {
  const dejavu = path.join(packageDir('dejavu-fonts-ttf'), 'ttf');
  const noto = (pkg: string, face: string) => ['400Regular', '700Bold'].map((weight) => path.join(packageDir(pkg), weight, `${face}_${weight}.ttf`));
  return [
    ...readdirSync(dejavu)
      .filter((file) => DEJAVU_FACE.test(file))
      .sort()
      .map((file) => path.join(dejavu, file)),
    ...NOTO_FACES.flatMap((face) => noto(`@expo-google-fonts/noto-sans-${face.slice('NotoSans'.length).toLowerCase()}`, face)),
    // Emoji in colour (as vector glyphs in the PDF); DejaVu draws only a few, in black.
    path.join(packageDir('@expo-google-fonts/noto-color-emoji'), '400Regular', 'NotoColorEmoji_400Regular.ttf'),
  ];
}

/**
 * A directory holding exactly `files` (as links, nothing copied), for Chromium's fontconfig: the local stack prints
 * with the layer's fonts, so a document looks (and breaks into pages) the same locally as in AWS. Made afresh each time.
 */
export function stageFonts(files: string[], dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of files) symlinkSync(file, path.join(dir, path.basename(file)));
  return dir;
}
