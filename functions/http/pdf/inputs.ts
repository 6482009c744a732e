/**
 * Takes merge/split/inspect requests as they arrived: a JSON body, or the fields and files of a
 * multipart/form-data body, for the schemas of functions/core/pdfops to read.
 */
import type { InspectForm } from '../../core/pdfops/inspect';
import type { MergeForm, SplitForm, Submitted } from '../../core/pdfops/requests';
import { ServiceError } from '../../core/errors';
import { INSTANT_LIMITS, JOB_LIMITS } from '../../core/pdf/limits';
import { type MultipartForm, type MultipartLimits, isMultipart, parseMultipart } from '../multipart';
import type { HttpRequest } from '../pipeline';

/** Form limits of one route; `takes` says what it accepts, for the refusal of a form with too many parts. */
function formLimits(takes: { text: string; maxFiles: number }): MultipartLimits {
  return {
    maxParts: 64,
    // The gateway refuses bodies over ~6 MB anyway; PDF_INPUT_TOO_LARGE is decided on the decoded total.
    maxFileBytes: 8 * 1024 * 1024,
    maxFieldBytes: 1024 * 1024,
    // Far more parts than any request needs: when most are files, too many files has its own code; too many other
    // fields stays INVALID_MULTIPART.
    refuse: (limit, info) =>
      limit === 'parts' && (info.fileParts ?? 0) > takes.maxFiles
        ? new ServiceError('TOO_MANY_FILES', `${takes.text}; this form has more than ${info.limit} parts.`, { max_files: takes.maxFiles, max_parts: info.limit })
        : undefined,
  };
}

const MERGE_FORM = formLimits({ text: `A merge takes at most ${INSTANT_LIMITS.maxMergeFiles} PDFs (POST /pdf/jobs up to ${JOB_LIMITS.maxMergeFiles})`, maxFiles: INSTANT_LIMITS.maxMergeFiles });
const SPLIT_FORM = formLimits({ text: 'A split takes exactly one PDF (the `file` part)', maxFiles: 1 });
const INSPECT_FORM = formLimits({ text: 'Inspect takes one PDF at a time (the `file` part)', maxFiles: 1 });

function form(req: HttpRequest, limits: MultipartLimits): MultipartForm | null {
  return isMultipart(req.headers['content-type']) ? parseMultipart(req.body, req.headers['content-type'], limits) : null;
}

const files = (f: MultipartForm, ...names: string[]) => f.all(...names).map((p) => ({ filename: p.filename, data: p.data }));

export function readMerge(req: HttpRequest): Submitted<MergeForm> {
  const f = form(req, MERGE_FORM);
  if (!f) return { json: req.json() };
  return { form: { files: files(f, 'files', 'files[]'), page_ranges: f.text('page_ranges'), options: f.text('options'), store: f.text('store') } };
}

export function readSplit(req: HttpRequest): Submitted<SplitForm> {
  const f = form(req, SPLIT_FORM);
  if (!f) return { json: req.json() };
  return { form: { file: files(f, 'file'), split: f.text('split'), options: f.text('options'), store: f.text('store') } };
}

export function readInspect(req: HttpRequest): Submitted<InspectForm> {
  const f = form(req, INSPECT_FORM);
  if (!f) return { json: req.json() };
  return { form: { file: files(f, 'file'), for: f.text('for') } };
}
