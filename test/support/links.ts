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
 * A one-hour download link: valid an hour from when it was made, which is after the job completed and (the expiry is
 * read before signing) no later than the link's signature.
 */
export function expectHourLink(url: string, expiresAt: string, job: { completed_at: string }): void {
  expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('3600');
  const expires = Date.parse(expiresAt);
  expect(expires).toBeGreaterThanOrEqual(Date.parse(job.completed_at) + 3600_000);
  expect(expires).toBeLessThan(signedAt(url) + 3601_000);
}

/**
 * A 15-minute upload URL: expires_at is read after signing, so it is at least 900 s after X-Amz-Date, and at most
 * 900 s after the answer was sent: its Date header (whole seconds, and Node may send the previous second for a moment
 * after it turns, hence 902).
 */
export function expectQuarterHour(res: Response, body: { upload_url: string; expires_at: string }): void {
  const expires = Date.parse(body.expires_at);
  expect(expires).toBeGreaterThanOrEqual(signedAt(body.upload_url) + 900_000);
  expect(expires).toBeLessThan(Date.parse(res.headers.get('date')!) + 902_000);
}
