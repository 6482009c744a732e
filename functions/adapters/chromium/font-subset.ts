import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * HarfBuzz's subsetter (the one fonttools and Google Fonts rely on), compiled to WebAssembly by the harfbuzzjs
 * package: no native code, no install script, and synchronous, so the CDK layer build (whose bundling hook is
 * synchronous) can use it as the local stack does. Build and local start only, never on Lambda.
 */
interface HarfBuzzSubset {
  memory: WebAssembly.Memory;
  _initialize(): void;
  malloc(bytes: number): number;
  free(pointer: number): void;
  hb_blob_create(data: number, length: number, mode: number, userData: number, destroy: number): number;
  hb_blob_destroy(blob: number): void;
  hb_blob_get_data(blob: number, length: number): number;
  hb_blob_get_length(blob: number): number;
  hb_face_create(blob: number, index: number): number;
  hb_face_destroy(face: number): void;
  hb_face_reference_blob(face: number): number;
  hb_set_clear(set: number): void;
  hb_set_del(set: number, codepoint: number): void;
  hb_subset_input_create_or_fail(): number;
  hb_subset_input_destroy(input: number): void;
  hb_subset_input_keep_everything(input: number): void;
  hb_subset_input_unicode_set(input: number): number;
  hb_subset_input_glyph_set(input: number): number;
  hb_subset_input_get_flags(input: number): number;
  hb_subset_input_set_flags(input: number, flags: number): void;
  hb_subset_or_fail(face: number, input: number): number;
}

const HB_MEMORY_MODE_WRITABLE = 2;
const HB_SUBSET_FLAGS_RETAIN_GIDS = 0x2;

const subsetterCode = () => readFileSync(require.resolve('harfbuzzjs/dist/harfbuzz-subset.wasm'));

/** Which subsetter this is (a digest of its code): fonts it made are reused only by the same one. */
export function subsetterVersion(): string {
  return createHash('sha256').update(subsetterCode()).digest('hex').slice(0, 16);
}

let harfBuzz: HarfBuzzSubset | null = null;
function subsetter(): HarfBuzzSubset {
  if (!harfBuzz) {
    const module = new WebAssembly.Module(subsetterCode());
    const instance = new WebAssembly.Instance(module, {}).exports as unknown as HarfBuzzSubset;
    instance._initialize();
    harfBuzz = instance;
  }
  return harfBuzz;
}

/**
 * `font` (TrueType) without the characters in `dropped`: everything else kept as it was (tables, hinting, layout
 * features, names, metrics, glyph ids), so text the font still covers lays out exactly as before. Glyphs only those
 * characters reached are left empty.
 */
export function fontWithout(font: Buffer, dropped: Iterable<number>): Buffer {
  const hb = subsetter();
  const data = hb.malloc(font.length);
  let face = 0;
  let input = 0;
  let subset = 0;
  let blob = 0;
  try {
    new Uint8Array(hb.memory.buffer).set(font, data);
    const source = hb.hb_blob_create(data, font.length, HB_MEMORY_MODE_WRITABLE, 0, 0);
    face = hb.hb_face_create(source, 0);
    hb.hb_blob_destroy(source);
    input = hb.hb_subset_input_create_or_fail();
    if (!input) throw new Error('harfbuzz: could not create a subset input');
    hb.hb_subset_input_keep_everything(input);
    hb.hb_subset_input_set_flags(input, hb.hb_subset_input_get_flags(input) | HB_SUBSET_FLAGS_RETAIN_GIDS);
    // Keeping every glyph would keep the characters mapped to them too: glyphs follow from the characters instead.
    hb.hb_set_clear(hb.hb_subset_input_glyph_set(input));
    const characters = hb.hb_subset_input_unicode_set(input);
    for (const codepoint of dropped) hb.hb_set_del(characters, codepoint);
    subset = hb.hb_subset_or_fail(face, input);
    if (!subset) throw new Error('harfbuzz: the font could not be subset (not a TrueType/OpenType font?)');
    blob = hb.hb_face_reference_blob(subset);
    const length = hb.hb_blob_get_length(blob);
    if (length === 0) throw new Error('harfbuzz: the subset font is empty');
    // Copied out: the view dies with the blob, and any later allocation may move wasm memory.
    return Buffer.from(new Uint8Array(hb.memory.buffer, hb.hb_blob_get_data(blob, 0), length));
  } finally {
    if (blob) hb.hb_blob_destroy(blob);
    if (subset) hb.hb_face_destroy(subset);
    if (input) hb.hb_subset_input_destroy(input);
    if (face) hb.hb_face_destroy(face);
    hb.free(data);
  }
}

let emojiPresentation: number[] | null = null;
/**
 * Every character Unicode shows as an emoji by default (Emoji_Presentation: 😀, ⚡, ☕, ♈ …; not ☺ or ✔, which are text
 * unless followed by U+FE0F). About 1,200, from the JavaScript engine's own Unicode tables.
 */
export function emojiPresentationCharacters(): number[] {
  if (!emojiPresentation) {
    const emoji = /^\p{Emoji_Presentation}$/u;
    emojiPresentation = [];
    for (let codepoint = 0; codepoint <= 0x10ffff; codepoint++) {
      if (codepoint >= 0xd800 && codepoint <= 0xdfff) continue;
      if (emoji.test(String.fromCodePoint(codepoint))) emojiPresentation.push(codepoint);
    }
  }
  return emojiPresentation;
}
