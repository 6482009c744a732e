import { readFileSync } from 'node:fs';
import path from 'node:path';
import { emojiPresentationCharacters, fontWithout } from '../../../../functions/adapters/chromium/font-subset';

const DEJAVU_SANS = readFileSync(path.resolve(__dirname, '../../../../node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf'));

/** The characters a TrueType font maps (its Unicode cmap subtable of format 4 or 12), read directly. */
function mappedCharacters(font: Buffer): Set<number> {
  const tables = font.readUInt16BE(4);
  let cmap = -1;
  for (let i = 0; i < tables; i++) if (font.toString('latin1', 12 + i * 16, 16 + i * 16) === 'cmap') cmap = font.readUInt32BE(20 + i * 16);
  const found = new Set<number>();
  const subtables = font.readUInt16BE(cmap + 2);
  for (let i = 0; i < subtables; i++) {
    const at = cmap + font.readUInt32BE(cmap + 8 + i * 8);
    const format = font.readUInt16BE(at);
    if (format === 12) {
      for (let g = 0, groups = font.readUInt32BE(at + 12); g < groups; g++) {
        const group = at + 16 + g * 12;
        for (let c = font.readUInt32BE(group); c <= font.readUInt32BE(group + 4); c++) found.add(c);
      }
    } else if (format === 4) {
      const segments = font.readUInt16BE(at + 6) / 2;
      const ends = at + 14;
      const starts = ends + segments * 2 + 2;
      const deltas = starts + segments * 2;
      const offsets = deltas + segments * 2;
      for (let s = 0; s < segments; s++) {
        const end = font.readUInt16BE(ends + s * 2);
        const start = font.readUInt16BE(starts + s * 2);
        const rangeOffset = font.readUInt16BE(offsets + s * 2);
        for (let c = start; c <= end && c !== 0xffff; c++) {
          const glyph = rangeOffset === 0 ? c : font.readUInt16BE(offsets + s * 2 + rangeOffset + (c - start) * 2);
          if (glyph !== 0) found.add(c);
        }
      }
    }
  }
  return found;
}

describe('fontWithout (HarfBuzz subsetting)', () => {
  it('takes exactly the given characters out of a font and keeps every other one', () => {
    const before = mappedCharacters(DEJAVU_SANS);
    const after = mappedCharacters(fontWithout(DEJAVU_SANS, emojiPresentationCharacters()));
    const emoji = new Set(emojiPresentationCharacters());
    expect([...before].filter((c) => emoji.has(c)).length).toBeGreaterThan(90); // 😀 😂 ⚡ ☕ … were there
    expect([...after].filter((c) => emoji.has(c))).toEqual([]);
    expect([...after].sort((a, b) => a - b)).toEqual([...before].filter((c) => !emoji.has(c)).sort((a, b) => a - b));
    expect(after.has(0x2714) && after.has(0x263a)).toBe(true); // ✔ ☺: text unless asked for as emoji
  });

  it('knows which characters are emoji by default (Emoji_Presentation), not those that are text unless asked', () => {
    const emoji = new Set(emojiPresentationCharacters());
    expect([0x1f600, 0x26a1, 0x2615, 0x1f1eb].every((c) => emoji.has(c))).toBe(true);
    expect([0x2714, 0x263a, 0x2605, 0x41, 0x23].some((c) => emoji.has(c))).toBe(false);
  });

  it('refuses what is not a font, saying so', () => {
    expect(() => fontWithout(Buffer.from('not a font at all'), [0x41])).toThrow(/could not be subset|empty/);
  });
});
