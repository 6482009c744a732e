/**
 * The Noto families the service prints text in for scripts DejaVu lacks (it printed as empty boxes), in the order
 * characters fall back to them: SC before KR, since both have Chinese characters (with KR first, Japanese printed in
 * Korean forms and a Chinese sentence in both faces); Hangul is only in KR. SC covers Chinese and Japanese (kana and
 * kanji); then Devanagari (Hindi, Marathi, Nepali), Bengali, Tamil and Thai. The render layer ships them (regular and
 * bold), the Chromium adapter's fontconfig falls back to them, and the Markdown stylesheet names them (so bold text
 * gets their bold faces: Chromium only emboldens a fallback face).
 */
export const FALLBACK_FAMILIES = ['Noto Sans SC', 'Noto Sans KR', 'Noto Sans Devanagari', 'Noto Sans Bengali', 'Noto Sans Tamil', 'Noto Sans Thai'] as const;
