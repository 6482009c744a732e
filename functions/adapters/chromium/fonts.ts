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
 * A fontconfig for Chromium where no system fonts exist (Lambda; the local stack uses the same fonts): the shipped
 * fonts in `fontDir`, plus what @sparticuz/chromium unpacks into /tmp/fonts (Open Sans). Families resolve as a
 * desktop's fontconfig resolves them: CSS's generic families and the common named ones (Times New Roman, Arial,
 * Courier New, …) to the DejaVu face of their class, and any other family to DejaVu Sans. Without this, text with no
 * font set (Chromium asks for Times New Roman) and every family not shipped printed in Open Sans, and line breaks and
 * page counts differed from a machine with DejaVu. Characters DejaVu lacks fall back to the Noto faces, the fallback
 * families in their order (core/render/fonts.ts), then emoji by coverage. Returns the directory to use as
 * FONTCONFIG_PATH: one per font directory, written whole (several local stacks, each with its own fonts, may launch
 * Chromium at once).
 */
export function writeFontConfig(fontDir: string, configDir = path.join(tmpdir(), `pdf-fontconfig-${createHash('sha256').update(fontDir).digest('hex').slice(0, 16)}`)): string {
  const generics = FAMILY_CLASSES.map(({ generic }) => generic);
  const family = (name: string) => `<family>${escapeXml(name)}</family>`;
  const xml = `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>${escapeXml(fontDir)}</dir>
  <dir>${escapeXml(path.join(tmpdir(), 'fonts'))}</dir>
  <cachedir>${escapeXml(path.join(tmpdir(), 'fonts-cache'))}</cachedir>
${FAMILY_CLASSES.flatMap(({ generic, named }) => named.map((name) => `  <alias binding="same">${family(name)}<default>${family(generic)}</default></alias>`)).join('\n')}
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
