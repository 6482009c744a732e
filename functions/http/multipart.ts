/**
 * A small, strict multipart/form-data parser (RFC 7578) for bodies that arrive whole (API Gateway delivers
 * them base64-encoded; the pipeline has already decoded them). Anything malformed is 400 INVALID_MULTIPART
 * with `details.reason`; limits on parts and sizes are enforced while parsing, so a hostile body costs
 * no more than its own size.
 */
import { ServiceError } from '../core/errors';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export interface MultipartPart {
  /** The form field name. */
  name: string;
  /** The file name when the part is a file upload (`filename`, RFC 5987 `filename*` or its RFC 2231 continuations), else null. */
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

export type MultipartLimit = 'parts' | 'file_bytes' | 'field_bytes' | 'total_bytes' | 'header_bytes';

export interface MultipartLimitInfo {
  name?: string;
  filename?: string | null;
  limit: number;
  /** For `parts`: how many of the parts read so far, the refused one included, are files. */
  fileParts?: number;
}

export interface MultipartLimits {
  /** Most parts (fields and files) accepted. */
  maxParts: number;
  /** Largest file part. */
  maxFileBytes: number;
  /** Largest non-file field. */
  maxFieldBytes: number;
  /** All file parts together. */
  maxTotalFileBytes?: number;
  /** Headers of one part. Default 8 KB. */
  maxHeaderBytes?: number;
  /** Lets a caller answer a limit with its own error (e.g. TOO_MANY_FILES); undefined keeps INVALID_MULTIPART. */
  refuse?: (limit: MultipartLimit, info: MultipartLimitInfo) => ServiceError | undefined;
}

export class MultipartForm {
  constructor(readonly parts: MultipartPart[]) {}

  /** Every part with one of these field names (e.g. `files` and `files[]`), in body order. */
  all(...names: string[]): MultipartPart[] {
    return this.parts.filter((p) => names.includes(p.name));
  }

  /** The text of a field (UTF-8); undefined when absent. A field sent twice is refused. */
  text(name: string): string | undefined {
    const parts = this.all(name);
    if (parts.length === 0) return undefined;
    if (parts.length > 1) throw malformed('duplicate_field', `The field "${name}" appears more than once; send it once.`, { field: name });
    try {
      return UTF8.decode(parts[0].data);
    } catch {
      // A lenient decode would carry U+FFFD into the document and into refusals that echo the field back.
      throw malformed('not_utf8', `The field "${name}" is not valid UTF-8; send text fields in UTF-8.`, { field: name });
    }
  }

  has(name: string): boolean {
    return this.parts.some((p) => p.name === name);
  }
}

function malformed(reason: string, message: string, details: Record<string, unknown> = {}): ServiceError {
  return new ServiceError('INVALID_MULTIPART', `${message} Send multipart/form-data as browsers and curl -F produce it.`, { reason, ...details });
}

export function isMultipart(contentType: string | undefined): boolean {
  return !!contentType && /^\s*multipart\/form-data\s*(;|$)/i.test(contentType);
}

/** Parameters of a header value (`form-data; name="a"; filename="b"`), lower-cased names, quotes undone. */
export function headerParams(value: string): { value: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  let i = value.indexOf(';');
  const main = (i < 0 ? value : value.slice(0, i)).trim().toLowerCase();
  while (i >= 0 && i < value.length) {
    i++;
    while (i < value.length && /\s/.test(value[i])) i++;
    const eq = value.indexOf('=', i);
    if (eq < 0) {
      if (value.slice(i).trim() === '') break;
      throw malformed('bad_header', `Header parameter "${value.slice(i).trim()}" has no value.`);
    }
    const key = value.slice(i, eq).trim().toLowerCase();
    if (!/^[a-z0-9!#$&+.^_`|~*-]+$/.test(key)) throw malformed('bad_header', `Header parameter name "${key}" is not valid.`);
    let j = eq + 1;
    while (j < value.length && value[j] === ' ') j++;
    let v = '';
    if (value[j] === '"') {
      j++;
      for (; j < value.length && value[j] !== '"'; j++) {
        // Only \" and \\ are escapes (curl writes them); any other backslash is literal, as browsers and Windows
        // clients send `filename="C:\Users\x\a.html"` unescaped.
        if (value[j] === '\\' && (value[j + 1] === '"' || value[j + 1] === '\\')) j++;
        v += value[j];
      }
      if (value[j] !== '"') throw malformed('bad_header', 'A quoted header parameter is not closed.');
      j++;
      while (j < value.length && value[j] === ' ') j++;
      if (j < value.length && value[j] !== ';') throw malformed('bad_header', 'Unexpected text after a quoted header parameter.');
    } else {
      const end = value.indexOf(';', j);
      v = (end < 0 ? value.slice(j) : value.slice(j, end)).trim();
      j = end < 0 ? value.length : end;
    }
    if (params.has(key)) throw malformed('bad_header', `Header parameter "${key}" appears twice.`);
    params.set(key, v);
    i = j < value.length ? j : -1;
  }
  return { value: main, params };
}

/** The boundary from a multipart Content-Type; 400 INVALID_MULTIPART when missing or invalid. */
export function boundaryOf(contentType: string | undefined): string {
  if (!isMultipart(contentType)) throw malformed('not_multipart', 'The request is not multipart/form-data.');
  const boundary = headerParams(contentType!).params.get('boundary');
  if (!boundary) throw malformed('no_boundary', 'The Content-Type header has no boundary parameter.');
  if (boundary.length > 70 || !/^[0-9A-Za-z'()+_,\-./:=? ]*[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary)) {
    throw malformed('bad_boundary', 'The multipart boundary is not valid (1 to 70 characters, RFC 2046).');
  }
  return boundary;
}

function decodeExtValue(v: string): string | null {
  const m = /^([A-Za-z0-9!#$%&+^_`{}~-]+)'[A-Za-z0-9-]*'(.*)$/.exec(v);
  if (!m) return null;
  const charset = m[1].toLowerCase();
  const escaped = m[2].replace(/%(?![0-9A-Fa-f]{2})/g, '%25');
  // Each charset decodes its own way: ISO-8859-1's bytes (caf%E9) are no UTF-8, so decoding them as UTF-8 first threw.
  if (charset === 'iso-8859-1') return escaped.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  if (charset !== 'utf-8') return null;
  try {
    return decodeURIComponent(escaped);
  } catch {
    return null;
  }
}

/**
 * A parameter split into RFC 2231 continuations (`filename*0*=utf-8''caf%C3%A9; filename*1=".html"`), joined in
 * order up to the first missing section and decoded as one value (null when it cannot be read); undefined when
 * the parameter has no sections. Extended sections (`*n*`) are percent-encoded, plain ones literal.
 */
function continuedParam(params: Map<string, string>, name: string): string | null | undefined {
  if (!params.has(`${name}*0`) && !params.has(`${name}*0*`)) return undefined;
  const extended = params.has(`${name}*0*`);
  let joined = '';
  for (let n = 0; params.has(`${name}*${n}`) || params.has(`${name}*${n}*`); n++) {
    const encoded = params.get(`${name}*${n}*`);
    const plain = params.get(`${name}*${n}`);
    if (encoded !== undefined && plain !== undefined) return null;
    // A literal section of an extended value is escaped so that it decodes to itself.
    joined += encoded ?? (extended ? encodeURIComponent(plain!) : plain!);
  }
  return extended ? decodeExtValue(joined) : joined;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** Parses a whole multipart/form-data body. */
export function parseMultipart(body: Buffer, contentType: string | undefined, limits: MultipartLimits): MultipartForm {
  const boundary = boundaryOf(contentType);
  const refuse = (limit: MultipartLimit, info: MultipartLimitInfo, message: string) =>
    limits.refuse?.(limit, info) ??
    // A limit is no malformed body: its message says what to send instead, not how to encode the form.
    new ServiceError('INVALID_MULTIPART', message, { reason: `too_many_${limit === 'parts' ? 'parts' : 'bytes'}`, limit: info.limit, ...(info.name ? { field: info.name } : {}) });
  const maxHeader = limits.maxHeaderBytes ?? 8192;
  const dash = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);

  if (!body.subarray(0, dash.length).equals(dash)) throw malformed('no_opening_boundary', 'The body does not start with the boundary from the Content-Type header.');
  let pos = dash.length;
  const parts: MultipartPart[] = [];
  let totalFiles = 0;
  let fileParts = 0;
  for (;;) {
    // After a boundary: "--" ends the body, otherwise optional padding then CRLF starts a part.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break;
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (!(body[pos] === 0x0d && body[pos + 1] === 0x0a)) throw malformed('bad_boundary_line', 'A boundary line is not followed by a line break.');
    pos += 2;

    const headerEnd = body.indexOf(HEADER_END, pos);
    const emptyHeaders = body[pos] === 0x0d && body[pos + 1] === 0x0a;
    const headersStop = emptyHeaders ? pos : headerEnd;
    if (headersStop < 0) throw malformed('unterminated_headers', 'A part has no blank line after its headers.');
    if (headersStop - pos > maxHeader) throw refuse('header_bytes', { limit: maxHeader }, `A part's headers are larger than ${maxHeader} bytes; shorten its field and file names.`);
    const headerText = body.subarray(pos, headersStop).toString('utf8');
    pos = emptyHeaders ? pos + 2 : headerEnd + 4;

    let disposition: string | undefined;
    let partType: string | null = null;
    for (const line of headerText === '' ? [] : headerText.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0 || /[\s]/.test(line.slice(0, colon))) throw malformed('bad_header', `Header line "${line.slice(0, 60)}" is not "Name: value".`);
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-disposition') {
        if (disposition !== undefined) throw malformed('bad_header', 'A part has two Content-Disposition headers.');
        disposition = value;
      } else if (name === 'content-type') partType = value || null;
    }
    if (disposition === undefined) throw malformed('no_disposition', 'A part has no Content-Disposition header.');
    const d = headerParams(disposition);
    if (d.value !== 'form-data') throw malformed('bad_disposition', 'Each part must have Content-Disposition: form-data.');
    const name = d.params.get('name');
    if (name === undefined || name === '') throw malformed('no_name', 'A part has no field name (Content-Disposition name="...").');
    const ext = d.params.get('filename*');
    // A part with a file name is a file, also when its name cannot be read (it then gets the route's default name):
    // taken for a text field, a file was refused as a field over its size limit.
    const continued = continuedParam(d.params, 'filename');
    const filename =
      (ext !== undefined ? decodeExtValue(ext) : null) ?? continued ?? d.params.get('filename') ?? (ext !== undefined || continued !== undefined ? '' : null);
    const isFile = filename !== null;
    if (isFile) fileParts++;
    // Checked once the part's kind is known, so a caller can tell too many files from too many fields.
    if (parts.length >= limits.maxParts) throw refuse('parts', { limit: limits.maxParts, fileParts }, `The form has more than ${limits.maxParts} parts; send fewer fields and files.`);

    const end = body.indexOf(delimiter, pos);
    if (end < 0) throw malformed('unterminated', 'The body ends before the closing boundary; it may be truncated.');
    const size = end - pos;
    if (isFile && size > limits.maxFileBytes) throw refuse('file_bytes', { name, filename, limit: limits.maxFileBytes }, `File "${filename}" is larger than ${limits.maxFileBytes} bytes; send a smaller file.`);
    if (!isFile && size > limits.maxFieldBytes) throw refuse('field_bytes', { name, limit: limits.maxFieldBytes }, `Field "${name}" is larger than ${limits.maxFieldBytes} bytes; send a shorter value.`);
    if (isFile) {
      totalFiles += size;
      if (limits.maxTotalFileBytes !== undefined && totalFiles > limits.maxTotalFileBytes) {
        throw refuse('total_bytes', { name, filename, limit: limits.maxTotalFileBytes }, `The files total more than ${limits.maxTotalFileBytes} bytes; send fewer or smaller files.`);
      }
    }
    parts.push({ name, filename, contentType: partType, data: body.subarray(pos, end) });
    pos = end + delimiter.length;
  }
  // Only line breaks may follow the closing delimiter (an epilogue is ignored by browsers; refuse anything else).
  const rest = body.subarray(pos + 2);
  if (rest.length > 0 && !rest.equals(CRLF) && rest.toString('latin1').trim() !== '') throw malformed('trailing_data', 'There is data after the closing boundary.');
  return new MultipartForm(parts);
}
