// Shutdown hooks: features register what to stop (timers, pools, the DB); they run in reverse order.
export class Lifecycle {
  private readonly hooks: Array<{ name: string; close: () => void | Promise<void> }> = [];

  onClose(name: string, close: () => void | Promise<void>): void {
    this.hooks.push({ name, close });
  }

  async close(onError: (name: string, error: unknown) => void): Promise<void> {
    while (this.hooks.length) {
      const hook = this.hooks.pop()!;
      try {
        await hook.close();
      } catch (error) {
        onError(hook.name, error);
      }
    }
  }
}
