import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The DejaVu faces the render layer ships (regular, bold, italic of sans, serif and mono: what the default stylesheets use). */
export const LAYER_FONT_FILE = /^DejaVu(Sans|Serif|SansMono)(-(Bold|Oblique|BoldOblique|Italic|BoldItalic))?\.ttf$/;

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A fontconfig for Chromium where no system fonts exist (Lambda): the shipped fonts in `fontDir`, plus what
 * @sparticuz/chromium unpacks into /tmp/fonts (Open Sans), with CSS's generic families mapped to DejaVu. Its own
 * configuration has no such mapping, so every face (serif, monospace code blocks) came out in Open Sans, and line
 * breaks and page counts differed from a machine with DejaVu. Returns the directory to use as FONTCONFIG_PATH.
 */
export function writeFontConfig(fontDir: string, configDir = path.join(tmpdir(), 'pdf-fontconfig')): string {
  const generic = [
    ['serif', 'DejaVu Serif'],
    ['sans-serif', 'DejaVu Sans'],
    ['monospace', 'DejaVu Sans Mono'],
  ];
  const xml = `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>${escapeXml(fontDir)}</dir>
  <dir>${escapeXml(path.join(tmpdir(), 'fonts'))}</dir>
  <cachedir>${escapeXml(path.join(tmpdir(), 'fonts-cache'))}</cachedir>
${generic.map(([family, face]) => `  <alias binding="same"><family>${family}</family><prefer><family>${face}</family></prefer></alias>`).join('\n')}
</fontconfig>
`;
  mkdirSync(configDir, { recursive: true });
  writeFileSync(path.join(configDir, 'fonts.conf'), xml);
  return configDir;
}
