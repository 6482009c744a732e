/**
 * Presigned links judged by the service's own times, not the test's clock (which runs apart from them on a loaded
 * machine, and says nothing about the link itself).
 */

/** When a presigned URL was signed: its X-Amz-Date (whole seconds, UTC). */
export function signedAt(url: string): number {
  const d = new URL(url).searchParams.get('X-Amz-Date')!;
  return Date.parse(`${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${d.slice(9, 11)}:${d.slice(11, 13)}:${d.slice(13, 15)}Z`);
}

/**
 * A one-hour download link: `expiresAt` says when it stops working, never later — S3 counts the hour from the
 * signature's whole second (X-Amz-Date) — and the link was made after the job completed (within that job's second).
 */
export function expectHourLink(url: string, expiresAt: string, job: { completed_at: string }): void {
  expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('3600');
  const expires = Date.parse(expiresAt);
  expect(expires).toBeLessThanOrEqual(signedAt(url) + 3600_000);
  expect(expires).toBeGreaterThanOrEqual(Math.floor(Date.parse(job.completed_at) / 1000) * 1000 + 3600_000);
}

/**
 * A 15-minute upload URL: `expires_at` is never after the URL stops working (900 s from its X-Amz-Date), and it was
 * made just before the answer was sent: its Date header (whole seconds, and Node may send the previous second for a
 * moment after it turns, hence the 2 s).
 */
export function expectQuarterHour(res: Response, body: { upload_url: string; expires_at: string }): void {
  const expires = Date.parse(body.expires_at);
  expect(expires).toBeLessThanOrEqual(signedAt(body.upload_url) + 900_000);
  expect(expires).toBeGreaterThanOrEqual(Date.parse(res.headers.get('date')!) - 2000 + 900_000);
}
