import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FALLBACK_FAMILIES } from '../../core/render/fonts';
import { emojiPresentationCharacters, fontWithout, subsetterVersion } from './font-subset';

/**
 * The DejaVu faces shipped: regular, bold, italic of sans, serif and mono (what the default stylesheets use), and the
 * math face (with an OpenType MATH table: MathML, and so Markdown's formulas, lays out with it).
 */
const DEJAVU_FACE = /^DejaVu((Sans|Serif|SansMono)(-(Bold|Oblique|BoldOblique|Italic|BoldItalic))?|MathTeXGyre)\.ttf$/;

/** A package's directory in node_modules (wherever npm placed it). */
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

/**
 * The faces Chromium prints with in AWS (the render layer's /opt/fonts) and in the local stack, as files in
 * node_modules: DejaVu Sans, Serif and Sans Mono (CSS's generic families; Latin, Greek, Cyrillic, Hebrew, Arabic), the
 * Noto fallback families (core/render/fonts.ts), regular and bold, and Noto Color Emoji. Build and local start only:
 * Lambda code finds the fonts in the layer.
 */
export function shippedFontFiles(): string[] {
  const dejavu = path.join(packageDir('dejavu-fonts-ttf'), 'ttf');
  const noto = (pkg: string, face: string) => ['400Regular', '700Bold'].map((weight) => path.join(packageDir(pkg), weight, `${face}_${weight}.ttf`));
  return [
    ...readdirSync(dejavu)
      .filter((file) => DEJAVU_FACE.test(file))
      .sort()
      .map((file) => path.join(dejavu, file)),
    // Each fallback family is the npm package @expo-google-fonts/noto-sans-<script>, its files named NotoSans<Script>_….
    ...FALLBACK_FAMILIES.flatMap((family) => noto(`@expo-google-fonts/${family.toLowerCase().replace(/ /g, '-')}`, family.replace(/ /g, ''))),
    // Emoji in colour (as vector glyphs in the PDF); DejaVu's own, drawn in black, are taken out (WITHOUT_EMOJI).
    path.join(packageDir('@expo-google-fonts/noto-color-emoji'), '400Regular', 'NotoColorEmoji_400Regular.ttf'),
  ];
}

/**
 * Faces shipped without the characters Unicode shows as emoji by default. Chromium prints a character in the first
 * font of the text's family that has it, and DejaVu Sans has ~100 of them (😀 😂 ⚡ ☕ ♈): they printed in black in
 * any document set in DejaVu (the default), while other emoji fell back to Noto Color Emoji. Taken out, they fall back
 * too. Everything else in the faces is kept as it was, so text lays out (and breaks into pages) exactly as before.
 */
const WITHOUT_EMOJI = /^DejaVu(Sans|Serif)/;

let processing: string | null = null;
/** What decides the shipped bytes beyond the source files (part of the layer asset's identity and of the cache key). */
export function shippedFontsProcessing(): string {
  return (processing ??= `without-emoji-presentation/harfbuzz-subset@${subsetterVersion()}/unicode@${process.versions.unicode}`);
}

/**
 * The file shipped for `file`: a DejaVu face without its emoji (made once per content and kept in node_modules/.cache,
 * ~50 ms a face), any other font as it is.
 */
export function shippedFontFile(file: string): string {
  if (!WITHOUT_EMOJI.test(path.basename(file))) return file;
  const source = readFileSync(file);
  const key = createHash('sha256').update(shippedFontsProcessing()).update(source).digest('hex').slice(0, 16);
  const cacheDir = path.join(packageDir('dejavu-fonts-ttf'), '..', '.cache', 'pdf-service-fonts');
  const cached = path.join(cacheDir, `${key}-${path.basename(file)}`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside and renamed: processes staging at once (test workers) never see half a font.
    const partial = `${cached}.${process.pid}.partial`;
    writeFileSync(partial, fontWithout(source, emojiPresentationCharacters()));
    renameSync(partial, cached);
  }
  return cached;
}

/**
 * A directory holding exactly the shipped `files` (see shippedFontFile), for Chromium's fontconfig: the local stack
 * prints with the layer's fonts, so a document looks (and breaks into pages) the same locally as in AWS. Made afresh
 * each time; files are linked, or copied where the directory is packaged (the layer).
 */
export function stageFonts(files: string[], dir: string, how: 'link' | 'copy' = 'link'): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of files) (how === 'copy' ? copyFileSync : symlinkSync)(shippedFontFile(file), path.join(dir, path.basename(file)));
  return dir;
}
