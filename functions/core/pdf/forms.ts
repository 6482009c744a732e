/**
 * The interactive form of a document as the editor sees it: every terminal field with its type, current
 * value, offered options, flags and the page its (first) widget sits on.
 */
import { PDFArray, PDFDict, PDFHexString, PDFName, type PDFObject, PDFRef, PDFString } from 'pdf-lib';
import { ReadBudgetExceeded } from './errors';
import { MAX_FIELD_REFERENCES, inheritedField, walkFields } from './features';
import { type PdfReader, numberOf, textOf } from './reader';

export type FieldType = 'text' | 'checkbox' | 'radio' | 'dropdown' | 'listbox' | 'signature' | 'button' | 'unknown';

export interface FormField {
  /** Fully qualified name (`parent.child`). */
  name: string;
  type: FieldType;
  /** Text: string; checkbox: boolean; radio: the selected export value or null; dropdown: string or null;
   *  listbox: array of selected values; signature: whether it is signed; button: null. */
  value: string | boolean | string[] | null;
  /** Values that can be set (choice options, radio export values, the checkbox on-value); null when free text. */
  options: string[] | null;
  required: boolean;
  read_only: boolean;
  /** 1-based page of the field's first widget, and its page id (`p0` …); null when it is on no page. */
  page: number | null;
  page_id: string | null;
  /** Text fields with a maximum length. */
  max_length?: number;
}

const K = {
  T: PDFName.of('T'),
  FT: PDFName.of('FT'),
  V: PDFName.of('V'),
  Ff: PDFName.of('Ff'),
  Opt: PDFName.of('Opt'),
  Kids: PDFName.of('Kids'),
  AP: PDFName.of('AP'),
  N: PDFName.of('N'),
  P: PDFName.of('P'),
  Parent: PDFName.of('Parent'),
  MaxLen: PDFName.of('MaxLen'),
  Annots: PDFName.of('Annots'),
  Subtype: PDFName.of('Subtype'),
  Widget: PDFName.of('Widget'),
  Off: PDFName.of('Off'),
  Tx: PDFName.of('Tx'),
  Btn: PDFName.of('Btn'),
  Ch: PDFName.of('Ch'),
  Sig: PDFName.of('Sig'),
} as const;

const FLAG = { readOnly: 1 << 0, required: 1 << 1, radio: 1 << 15, pushbutton: 1 << 16, combo: 1 << 17, multiSelect: 1 << 21 };

function stringValue(v: PDFObject | undefined): string | null {
  if (v instanceof PDFString || v instanceof PDFHexString) return textOf(v) ?? null;
  if (v instanceof PDFName) return v.decodeText();
  return null;
}

/** Characters (names, values, options) and array entries one form listing may hold: a response carries at most 6 MB. */
export const MAX_FORM_LISTING = 2_000_000;

/** Every form field of the document (empty when there is no form). Pages must be readable. */
export function listFormFields(reader: PdfReader): FormField[] {
  const pages = reader.pages();
  const pageOfRef = new Map<PDFRef, number>();
  pages.forEach((p) => p.ref && pageOfRef.set(p.ref, p.index));
  // Widgets without /P: find them through the pages' /Annots (built only if needed).
  let widgetPages: Map<PDFObject, number> | null = null;
  const pageOfWidget = (widgetObj: PDFObject | undefined, widget: PDFDict): number | null => {
    const p = widget.get(K.P);
    if (p instanceof PDFRef && pageOfRef.has(p)) return pageOfRef.get(p)!;
    if (!widgetPages) {
      widgetPages = new Map();
      for (const page of pages) {
        const annots = reader.get(page.dict, K.Annots, PDFArray);
        if (annots) for (const a of annots.asArray()) if (!widgetPages.has(a)) widgetPages.set(a instanceof PDFRef ? a : reader.resolve(a) ?? a, page.index);
      }
    }
    return widgetPages.get(widgetObj instanceof PDFRef ? widgetObj : widget) ?? null;
  };

  const names = new Map<PDFDict, string>();
  const fields: FormField[] = [];
  let kidReads = 0;
  // The listing is one answer: values, options and names are counted as they are read (with the entries read to find
  // them), so a value or option list shared by thousands of fields ends here rather than as an answer no response can
  // carry (6,000 fields sharing one 100,000-character value: 35 s, then a string too long for JSON).
  let listed = 0;
  const charge = (n: number) => {
    listed += n;
    if (listed > MAX_FORM_LISTING) {
      throw new ReadBudgetExceeded('form_too_large', `The form's field names, values and options hold more than ${MAX_FORM_LISTING.toLocaleString('en-US')} characters and entries, more than one answer can carry.`);
    }
  };
  const entriesOf = (array: PDFArray) => {
    charge(2 * array.size());
    return array.asArray();
  };
  walkFields(reader, (field) => {
    const parent = reader.get(field, K.Parent, PDFDict);
    const partial = stringValue(reader.resolve(field.get(K.T)));
    const parentName = parent ? names.get(parent) : undefined;
    const name = partial === null ? parentName ?? '' : parentName ? `${parentName}.${partial}` : partial;
    names.set(field, name);
    if (partial === null) return; // a widget of its parent, not a field
    const kids = reader.get(field, K.Kids, PDFArray);
    const kidObjs = kids ? kids.asArray() : [];
    // Each field reads its kids a few times over (children, widgets, their pages and states): a real form's widgets belong
    // to one field each, but 10,000 fields sharing one /Kids array of 10,000 widgets took 31 s from 214 KB.
    kidReads += kidObjs.length;
    if (kidReads > MAX_FIELD_REFERENCES) {
      throw new ReadBudgetExceeded('form_too_complex', `The form's fields list more than ${MAX_FIELD_REFERENCES.toLocaleString('en-US')} kids in all (fields sharing their widgets), more than can be listed.`);
    }
    const childFields = kidObjs.filter((k) => {
      const d = reader.resolve(k);
      return d instanceof PDFDict && d.get(K.T) !== undefined;
    });
    if (childFields.length > 0) return; // not terminal
    const widgetObjs: (PDFObject | undefined)[] = kidObjs.length ? kidObjs : [undefined];
    const widgets = widgetObjs.map((w) => ({ obj: w, dict: w === undefined ? field : reader.resolve(w) })).filter((w): w is { obj: PDFObject | undefined; dict: PDFDict } => w.dict instanceof PDFDict);

    const ft = inheritedField(reader, field, K.FT);
    const flags = numberOf(inheritedField(reader, field, K.Ff)) ?? 0;
    const v = inheritedField(reader, field, K.V);
    let type: FieldType = 'unknown';
    let value: FormField['value'] = null;
    let options: string[] | null = null;
    // Buttons with /Opt name their states by index into it (PDF 32000-1, 12.7.4.2.4): show the export values.
    const btnOpt = reader.resolve(inheritedField(reader, field, K.Opt));
    const exportOf = (state: string) => {
      if (btnOpt instanceof PDFArray && /^\d+$/.test(state) && Number(state) < btnOpt.size()) return stringValue(reader.resolve(btnOpt.get(Number(state)))) ?? state;
      return state;
    };
    const onValues = () => {
      const set = new Set<string>();
      for (const w of widgets) {
        const n = reader.resolve(reader.get(w.dict, K.AP, PDFDict)?.get(K.N));
        if (n instanceof PDFDict) {
          const keys = n.keys();
          charge(2 * keys.length);
          for (const key of keys) if (key !== K.Off) set.add(exportOf(key.decodeText()));
        }
      }
      return [...set];
    };
    if (ft === K.Tx) {
      type = 'text';
      value = stringValue(v) ?? '';
    } else if (ft === K.Btn) {
      if (flags & FLAG.pushbutton) type = 'button';
      else if (flags & FLAG.radio) {
        type = 'radio';
        options = onValues();
        value = v instanceof PDFName && v !== K.Off ? exportOf(v.decodeText()) : null;
      } else {
        type = 'checkbox';
        options = onValues();
        value = v instanceof PDFName && v !== K.Off;
      }
    } else if (ft === K.Ch) {
      type = flags & FLAG.combo ? 'dropdown' : 'listbox';
      const opt = reader.resolve(inheritedField(reader, field, K.Opt));
      options = [];
      if (opt instanceof PDFArray) {
        for (const o of entriesOf(opt)) {
          const item = reader.resolve(o);
          const exportValue = item instanceof PDFArray ? stringValue(reader.resolve(item.get(0))) : stringValue(item);
          if (exportValue !== null) options.push(exportValue);
        }
      }
      if (type === 'listbox') value = v instanceof PDFArray ? entriesOf(v).map((x) => stringValue(reader.resolve(x))).filter((x): x is string => x !== null) : stringValue(v) !== null ? [stringValue(v)!] : [];
      else value = stringValue(v);
    } else if (ft === K.Sig) {
      type = 'signature';
      value = v instanceof PDFDict;
    }
    let pageIndex: number | null = null;
    for (const w of widgets) {
      pageIndex = pageOfWidget(w.obj, w.dict);
      if (pageIndex !== null) break;
    }
    const out: FormField = {
      name,
      type,
      value,
      options,
      required: !!(flags & FLAG.required),
      read_only: !!(flags & FLAG.readOnly),
      page: pageIndex === null ? null : pageIndex + 1,
      page_id: pageIndex === null ? null : `p${pageIndex}`,
    };
    charge(name.length + (typeof value === 'string' ? value.length : Array.isArray(value) ? value.reduce((n, x) => n + x.length, 0) : 0) + (options ?? []).reduce((n, x) => n + x.length, 0));
    const maxLen = numberOf(inheritedField(reader, field, K.MaxLen));
    if (type === 'text' && maxLen !== undefined) out.max_length = maxLen;
    fields.push(out);
  });
  return fields;
}
