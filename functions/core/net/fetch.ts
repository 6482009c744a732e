/** Outbound HTTP as the domain sees it (URL input, webhook delivery). Implemented by adapters/net/guarded-http.ts. */
export type FetchFailure =
  | 'invalid_url'
  | 'credentials'
  | 'scheme'
  | 'blocked'
  | 'dns'
  | 'connect'
  | 'tls'
  /** No answer within the deadline, or (with `idleTimeoutMs`) the remote sent nothing for that long. */
  | 'timeout'
  /** With `idleTimeoutMs`: the remote kept sending, but the whole exchange passed `timeoutMs`. */
  | 'too_slow'
  | 'too_large'
  | 'too_many_redirects'
  | 'redirect_refused'
  | 'bad_response';

export class FetchError extends Error {
  constructor(
    readonly kind: FetchFailure,
    readonly url: string,
    message: string,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export interface HttpRequestSpec {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Schemes allowed on every hop. */
  schemes: ('https:' | 'http:')[];
  /** 0 means redirects are returned as responses, not followed. */
  maxRedirects: number;
  /** Cap on decoded body bytes (a lying Content-Length or a compression bomb stops here). */
  maxBytes: number;
  /** Whole-request deadline: connecting, waiting and reading (up to the status line when the body is discarded). */
  timeoutMs: number;
  /**
   * Fail as soon as the remote is silent this long — no DNS answer, no response yet, no next body bytes — rather
   * than only at `timeoutMs`, which then caps a remote that keeps sending slowly (`too_slow`).
   */
  idleTimeoutMs?: number;
  /**
   * Settle on the status line: the result has the status and headers and an empty body, whatever the body's size
   * (webhook delivery: a 2xx is the receiver's acknowledgement). The body is read a little, then dropped with the
   * connection. Without it the body is read in full, capped at `maxBytes`.
   */
  discardBody?: boolean;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  finalUrl: string;
  redirects: string[];
}

export interface HttpClient {
  request(spec: HttpRequestSpec): Promise<HttpResult>;
}
