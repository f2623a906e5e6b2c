// How a history import shares the event loop: work in slices of SLICE_MS, then a turn of the loop; and what the last
// import's slices took, for the benchmark (test/bench/import.ts).

/** Work between two yields of the event loop (then a step may still finish, and the slice commits). */
export const SLICE_MS = 15;

export const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The last file's reading and checking (for the benchmark): the longest stretch between two yields, in ms. */
export const lastRead = { longestMs: 0 };

/** The last import's slices (for the benchmark): how many, and the longest in ms. */
export const lastWrite: { slices: number; longestMs: number; durations: number[]; commits: number[] } = { slices: 0, longestMs: 0, durations: [], commits: [] };
