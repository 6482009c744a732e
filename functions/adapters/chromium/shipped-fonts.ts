import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { FALLBACK_FAMILIES } from '../../core/render/fonts';

/** The DejaVu faces shipped (regular, bold, italic of sans, serif and mono: what the default stylesheets use). */
const DEJAVU_FACE = /^DejaVu(Sans|Serif|SansMono)(-(Bold|Oblique|BoldOblique|Italic|BoldItalic))?\.ttf$/;

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
