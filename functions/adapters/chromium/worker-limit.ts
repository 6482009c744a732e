/**
 * Workers (dedicated, nested, shared, service) of a document's browser context, counted while alive. Each runs on a
 * thread of its own beside the page: a document starting many busy workers would take every core of the host for its
 * whole time limit while holding one printing slot. A context past the limit is reported once; the renderer then
 * refuses the document, and disposing its context stops the workers.
 *
 * Chromium reports every worker target, with its browser context, through target discovery (which puppeteer keeps on
 * for the browser connection), so counting costs a document no CDP command.
 */
import { ServiceError } from '../../core/errors';

/** Workers a document may have alive at once. */
export const MAX_DOCUMENT_WORKERS = 2;

export interface TargetInfo {
  targetId: string;
  type: string;
  browserContextId?: string;
}

interface WatchedContext {
  live: Set<string>;
  onExceeded: () => void;
  exceeded: boolean;
}

export class WorkerCount {
  private readonly contexts = new Map<string, WatchedContext>();
  /** Worker target → its context, to count it out when it ends. */
  private readonly contextOf = new Map<string, string>();

  constructor(private readonly max: number = MAX_DOCUMENT_WORKERS) {}

  /** Counts the workers of `contextId` until `forget`; `onExceeded` is called once, when one too many is alive. */
  watch(contextId: string, onExceeded: () => void): void {
    this.contexts.set(contextId, { live: new Set(), onExceeded, exceeded: false });
  }

  /** The browser went away with every context. */
  clear(): void {
    this.contexts.clear();
    this.contextOf.clear();
  }

  forget(contextId: string): void {
    const context = this.contexts.get(contextId);
    if (!context) return;
    for (const targetId of context.live) this.contextOf.delete(targetId);
    this.contexts.delete(contextId);
  }

  /** Target discovery's `Target.targetCreated`. */
  created(info: TargetInfo): void {
    if (!isWorker(info.type) || !info.browserContextId) return;
    const context = this.contexts.get(info.browserContextId);
    if (!context) return;
    context.live.add(info.targetId);
    this.contextOf.set(info.targetId, info.browserContextId);
    if (context.live.size > this.max && !context.exceeded) {
      context.exceeded = true;
      context.onExceeded();
    }
  }

  /** Target discovery's `Target.targetDestroyed` (a worker that ended or was terminated). */
  destroyed(targetId: string): void {
    const contextId = this.contextOf.get(targetId);
    if (contextId === undefined) return;
    this.contextOf.delete(targetId);
    this.contexts.get(contextId)?.live.delete(targetId);
  }
}

/** `worker`, `shared_worker`, `service_worker` (worklets run on threads the page already has). */
function isWorker(type: string): boolean {
  return type === 'worker' || type === 'shared_worker' || type === 'service_worker';
}

/** 400: the document is refused as written (it fails the same way every time: not a 500 to retry). */
export function tooManyWorkersError(max: number = MAX_DOCUMENT_WORKERS): ServiceError {
  return new ServiceError('INVALID_PARAMETER', `The document ran more than ${max} web workers at once; a document may run at most ${max} beside its page. Start fewer workers, or do the work in the page.`, {
    parameter: 'html',
    reason: 'too_many_workers',
    max_workers: max,
  });
}

/** Web Audio rendering threads a document may run at once (see MemoryCaps.audioThreads): as many as workers. */
export const MAX_DOCUMENT_AUDIO_THREADS = MAX_DOCUMENT_WORKERS;

/** 400, as for workers: the document is refused as written. */
export function tooManyAudioThreadsError(max: number = MAX_DOCUMENT_AUDIO_THREADS): ServiceError {
  return new ServiceError('INVALID_PARAMETER', `The document rendered more than ${max} Web Audio contexts at once (each runs on a thread of its own beside the page). Render fewer at once, or none: a printed document plays no sound.`, {
    parameter: 'html',
    reason: 'too_many_audio_threads',
    max_audio_threads: max,
  });
}
