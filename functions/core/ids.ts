import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

/** Time-ordered ids with a readable type prefix (job_01J…); ULIDs sort by creation time. */
export function newId(prefix: 'job' | 'key' | 'wh' | 'dlv' | 'tpl' | 'cmp' | 'conn' | 'req'): string {
  return `${prefix}_${ulid()}`;
}

/** A bare ULID (webhook delivery ids are specified as ULIDs). */
export function newUlid(): string {
  return ulid();
}
