import { z } from 'zod';
import { DISPLAY_CONTROLS } from './display-controls';

// With the u flag a paired surrogate is one code point, so \p{Cs} finds only half pairs.
const NOT_ALLOWED = new RegExp(`[\\p{Cc}\\p{Cs}${DISPLAY_CONTROLS}]`, 'u');
const VISIBLE = /[^\s\p{Cf}]/u;

/** What a label must be, read after "name must be" (refusals) and "A label:" (descriptions) alike. */
export function labelRule(maxLength: number): string {
  return `1 to ${maxLength} characters of text once leading and trailing white space is trimmed, not only invisible characters, with no control or text-direction characters`;
}

/**
 * The label rule as the OpenAPI document states it (flagless, so without \p classes): white space around text that
 * starts and ends with a non-space character and has no control or text-direction character (white space such as a
 * trailing line break is trimmed off, not refused). Not stated: names only of other invisible characters (U+200B…)
 * and half surrogate pairs are refused too, and the length counts the trimmed text.
 */
const BARRED = String.raw`\u0000-\u001f\u007f-\u009f` + DISPLAY_CONTROLS;
export const LABEL_PATTERN = String.raw`^\s*[^\s${BARRED}](?:[^${BARRED}]*[^\s${BARRED}])?\s*$`;

/**
 * A name a user gives something (an API key, a webhook), shown back in listings and the dashboard: trimmed, then 1 to
 * `maxLength` characters, well-formed Unicode (half a surrogate pair is not text, and DynamoDB refuses it), no control
 * characters (they garble listings), no text-direction controls (`prod\u202E` would display as another name), and not
 * only invisible characters (U+200B…).
 */
export function labelSchema(maxLength: number) {
  return z
    .string()
    .trim()
    .min(1)
    .max(maxLength)
    .refine((label) => !NOT_ALLOWED.test(label) && VISIBLE.test(label))
    .meta({ pattern: LABEL_PATTERN });
}
