import { DISPLAY_CONTROLS } from './display-controls';

const DISPLAY_CONTROL = new RegExp(`[${DISPLAY_CONTROLS}]`, 'gu');

/**
 * A value the caller sent, quoted for an error message: JSON-quoted (control characters and lone surrogates escaped),
 * display controls escaped too (a right-to-left override would make the message read as something else), and cut to
 * `max` characters, so a megabyte sent back does not become a megabyte of message. Non-strings are named by kind.
 */
export function shownValue(value: unknown, max = 60): string {
  if (typeof value !== 'string') {
    if (value === null) return 'null';
    if (value === undefined) return 'nothing';
    if (Array.isArray(value)) return 'an array';
    return typeof value === 'object' ? 'an object' : typeof value === 'number' && !Number.isFinite(value) ? 'a number out of range' : JSON.stringify(value);
  }
  const chars = Array.from(value);
  const cut = chars.length > max ? `${chars.slice(0, max).join('')}…` : value;
  return JSON.stringify(cut).replace(DISPLAY_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
