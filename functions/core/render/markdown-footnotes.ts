import type { Lexer, MarkedExtension, Token, Tokens } from 'marked';

/**
 * GitHub's footnotes: `text[^label]` references and `[^label]: note` definitions (anywhere in the document, before or
 * after their references), printed as numbered links to a list at the end of the document, in the order the notes are
 * first referenced, each note linked back to every reference. A reference to a label no note defines stays text; a
 * note nobody references is not listed.
 *
 * Written to replace marked-footnote, which for every reference searched all definitions and all listed notes by
 * label (Array.filter): quadratic, so ~5,000 footnotes overran the parse deadline. Here a reference costs one Map
 * lookup. The HTML is the one marked-footnote wrote with its default options (and the labels escaped as markdown.ts
 * then escaped them), so documents print as before.
 */

/**
 * A definition: `[^label]:`, the rest of its line, then any lines indented by 4 spaces or a tab (blank lines may
 * separate them). Anchored and without nested repetition, so a failed match costs one pass over a line.
 *
 * A label holds no bracket, as on GitHub. marked-footnote allowed `[`: a reference was then tried at every `[` of a
 * line such as `[^[^[^…`, each try reading to the end of the line (quadratic: 100 KB took 5 s); now a try stops at
 * the next bracket, so a line is read once however many tries it takes.
 */
const DEFINITION = /^\[\^([^[\]\n]+)\]:[ \t]*([^\n]*)(?:\n|$)((?:\n*(?: {4}|\t)[^\n]*)*)/;
/** A reference: `[^label]`. */
const REFERENCE = /^\[\^([^[\]\n]+)\]/;
/** The indentation a continuation line of a note loses. */
const CONTINUATION_INDENT = /^(?: {4}|\t)/;
/**
 * A last line that starts or ends a list, a quote, a code fence or a table: the note's Markdown gets a blank line after
 * it, as marked-footnote gave it, so such a block ends the same way.
 */
const OPEN_BLOCK_LINE = /^[ \t]*?[>\-*][ ]|[`]{3,}$|^[ \t]*?[|].+[|]$/;

const ID_PREFIX = 'footnote-';
const LIST_HEADING_ID = `${ID_PREFIX}label`;

/** A defined note. `references` fills in as the document's inline text is tokenized (after all its blocks). */
type Note = Tokens.Generic & {
  type: 'footnote';
  label: string;
  content: Token[];
  /** Its number in the list, given when it is first referenced (0: not referenced yet). */
  number: number;
  references: Reference[];
};
type Reference = Tokens.Generic & {
  type: 'footnoteRef';
  label: string;
  number: number;
  /** 0 for the note's first reference, 1 for its second… (the second and later get their own ids). */
  occurrence: number;
};
/** The list at the end of the document: the referenced notes, in the order of their first references. */
type NoteList = Tokens.Generic & { type: 'footnotes'; notes: Note[] };

/** One document's notes. Kept per lexer (one per marked.lexer/parse call), so no conversion sees another's notes. */
type Footnotes = { byLabel: Map<string, Note>; list: NoteList };
const footnotesOf = new WeakMap<Lexer, Footnotes>();

function footnotesFor(lexer: Lexer): Footnotes {
  let footnotes = footnotesOf.get(lexer);
  if (!footnotes) {
    footnotes = { byLabel: new Map(), list: { type: 'footnotes', raw: '', notes: [] } };
    footnotesOf.set(lexer, footnotes);
  }
  return footnotes;
}

/**
 * A label as written into attributes: HTML-escaped (a quote in `[^a"b]` broke out of marked-footnote's aria-label),
 * and `$` as `&#36;`, as markdown.ts escaped it for marked-footnote, so ids stay those of earlier PDFs.
 */
const LABEL_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', $: '&#36;' };
const escapeLabel = (label: string) => label.replace(/[&<>"'$]/g, (c) => LABEL_ESCAPES[c]);
/** The part of a note's ids that comes from its label. */
const idOf = (label: string) => encodeURIComponent(escapeLabel(label));
/** `-2`, `-3`… after the id of a note's second, third… reference. */
const occurrenceSuffix = (occurrence: number) => (occurrence > 0 ? `-${occurrence + 1}` : '');

/** A note's Markdown: its lines without their continuation indent. */
function noteMarkdown(firstLine: string, continuation: string): string {
  const lines = continuation ? [firstLine, ...continuation.split('\n').map((line) => line.replace(CONTINUATION_INDENT, ''))] : [firstLine];
  const markdown = lines.join('\n');
  const last = markdown.trimEnd().split('\n').pop();
  return last && OPEN_BLOCK_LINE.test(last) ? `${markdown}\n\n` : markdown;
}

function renderNote(note: Note, html: string): string {
  const id = idOf(note.label);
  const label = escapeLabel(note.label);
  // The back links go inside the note's last paragraph, when it ends with one, as on GitHub.
  const inParagraph = html.endsWith('</p>');
  const backLinks = note.references
    .map(({ occurrence }) => {
      const marker = occurrence > 0 ? `↩<sup>${occurrence + 1}</sup>` : '↩';
      return ` <a href="#${ID_PREFIX}ref-${id}${occurrenceSuffix(occurrence)}" data-${ID_PREFIX}backref aria-label="Back to reference ${label}">${marker}</a>`;
    })
    .join('');
  const body = inParagraph ? html.slice(0, -'</p>'.length) : html;
  return `<li id="${ID_PREFIX}${id}">\n${body}${backLinks}${inParagraph ? '</p>\n' : '\n'}</li>\n`;
}

/**
 * The extension. No `start` hooks: inline, marked already ends a run of text at every `[`, so each `[^` is tried; as a
 * block, a definition starts after a blank line or another block (it does not interrupt a paragraph, as with
 * marked-footnote). A hook searching the rest of the source on every call would make long documents quadratic again.
 */
export const GITHUB_FOOTNOTES: MarkedExtension = {
  extensions: [
    {
      name: 'footnote',
      level: 'block',
      // The note's content is walked where it is defined (heading ids, alerts, emoji inside notes).
      childTokens: ['content'],
      tokenizer(src: string): Note | undefined {
        const match = DEFINITION.exec(src);
        if (!match) return undefined;
        const [raw, label, firstLine, continuation] = match;
        const note: Note = { type: 'footnote', raw, label, content: this.lexer.blockTokens(noteMarkdown(firstLine, continuation)), number: 0, references: [] };
        const { byLabel } = footnotesFor(this.lexer);
        // A label defined twice keeps its first note; the second prints nowhere.
        if (!byLabel.has(label)) byLabel.set(label, note);
        return note;
      },
      // Printed in the list at the end, not where it is defined.
      renderer: () => '',
    },
    {
      name: 'footnoteRef',
      level: 'inline',
      tokenizer(src: string): Reference | undefined {
        const match = REFERENCE.exec(src);
        if (!match) return undefined;
        const footnotes = footnotesOf.get(this.lexer);
        const note = footnotes?.byLabel.get(match[1]);
        if (!footnotes || !note) return undefined;
        if (note.number === 0) {
          const { list } = footnotes;
          // Inline text is tokenized only once every block of the document has been (marked queues it): the first
          // reference can put the list after the document's last block.
          if (list.notes.length === 0) this.lexer.tokens.push(list);
          list.notes.push(note);
          note.number = list.notes.length;
        }
        const reference: Reference = { type: 'footnoteRef', raw: match[0], label: note.label, number: note.number, occurrence: note.references.length };
        note.references.push(reference);
        return reference;
      },
      renderer(token) {
        const { label, number, occurrence } = token as Reference;
        const id = idOf(label);
        return `<sup><a id="${ID_PREFIX}ref-${id}${occurrenceSuffix(occurrence)}" href="#${ID_PREFIX}${id}" data-${ID_PREFIX}ref aria-describedby="${LIST_HEADING_ID}">${number}</a></sup>`;
      },
    },
    {
      name: 'footnotes',
      renderer(token) {
        const { notes } = token as NoteList;
        const items = notes.map((note) => renderNote(note, this.parser.parse(note.content).trimEnd())).join('');
        return `<section class="footnotes" data-footnotes>\n<h2 id="${LIST_HEADING_ID}" class="sr-only">Footnotes</h2>\n<ol>\n${items}</ol>\n</section>\n`;
      },
    },
  ],
};

/**
 * The ids the footnotes take in the HTML (the list's heading, each note and each reference to it), so that headings
 * can be given others: a heading "Footnote 1" must not take the first note's id.
 */
export function footnoteIds(tokens: Token[]): string[] {
  const ids = [LIST_HEADING_ID];
  for (const token of tokens) {
    if (token.type !== 'footnotes') continue;
    for (const note of (token as NoteList).notes) {
      const id = idOf(note.label);
      for (const { occurrence } of note.references) ids.push(`${ID_PREFIX}ref-${id}${occurrenceSuffix(occurrence)}`);
      ids.push(`${ID_PREFIX}${id}`);
    }
  }
  return ids;
}
