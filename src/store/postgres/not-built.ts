/** A repository method the PostgreSQL store does not have yet: calling it throws, naming it. */
export function notBuilt(name: string): (...args: unknown[]) => never {
  return () => {
    throw new Error(`the PostgreSQL store does not implement ${name} yet`);
  };
}
