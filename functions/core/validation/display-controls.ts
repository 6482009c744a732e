/**
 * The bidirectional controls and line separators, as the body of a character class for a `u` RegExp: in a name they
 * make it display as another (`invoice\u202Elmth.exe` shows as `invoiceexe.html`).
 */
export const DISPLAY_CONTROLS = String.raw`\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029`;
