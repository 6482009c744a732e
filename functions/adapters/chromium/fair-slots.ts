/**
 * Printing slots shared fairly between tenants (accounts). One process prints for every account (the local stack,
 * a warm render worker), so a first-come queue would let one account's documents that spin until their limit hold
 * every slot while others wait the whole limit. Two rules keep that bounded:
 *
 * - **A reserve slot.** Beyond `capacity`, one more document may print if its tenant prints nothing yet: an account
 *   whose documents hold every slot delays a newcomer by nothing. A single busy tenant never gets the reserve, so
 *   alone it prints exactly `capacity` at once, as before.
 * - **Fewest first.** A freed slot goes to the waiting tenant printing the fewest documents (first come among equals),
 *   except that a page resuming after an idle wait (`resume`) goes ahead of documents not yet started.
 */
export class FairSlots {
  private active = 0;
  private readonly activeByTenant = new Map<string, number>();
  private readonly waiting: { tenant: string; resume: boolean; start: () => void }[] = [];

  constructor(private readonly capacity: number) {}

  /** Waits for a slot for `tenant`; the returned function gives it back (once; later calls do nothing). */
  async acquire(tenant = '', resume = false): Promise<() => void> {
    await new Promise<void>((start) => {
      this.waiting.push({ tenant, resume, start });
      this.dispatch();
    });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const held = (this.activeByTenant.get(tenant) ?? 1) - 1;
      if (held > 0) this.activeByTenant.set(tenant, held);
      else this.activeByTenant.delete(tenant);
      this.dispatch();
    };
  }

  /** Documents printing now, and waiting (tests, diagnostics). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }

  private held(tenant: string): number {
    return this.activeByTenant.get(tenant) ?? 0;
  }

  private mayStart(tenant: string): boolean {
    return this.active < this.capacity || (this.active < this.capacity + 1 && this.held(tenant) === 0);
  }

  private take(tenant: string) {
    this.active++;
    this.activeByTenant.set(tenant, this.held(tenant) + 1);
  }

  private dispatch() {
    for (;;) {
      let best = -1;
      for (let i = 0; i < this.waiting.length; i++) {
        const candidate = this.waiting[i];
        if (!this.mayStart(candidate.tenant)) continue;
        if (best < 0) {
          best = i;
          continue;
        }
        const chosen = this.waiting[best];
        if (candidate.resume !== chosen.resume ? candidate.resume : this.held(candidate.tenant) < this.held(chosen.tenant)) best = i;
      }
      if (best < 0) return;
      const [next] = this.waiting.splice(best, 1);
      this.take(next.tenant);
      next.start();
    }
  }
}
