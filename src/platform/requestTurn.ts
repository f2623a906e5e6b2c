// The request turn, opened by the HTTP front door and read by the caches (src/platform/db/kept.ts): a module of its
// own so that neither the HTTP layer imports storage nor storage imports HTTP.

/**
 * The request turn: the HTTP requests libuv hands over in one poll phase (the sockets one `epoll_wait` found
 * readable) share one `PRAGMA data_version` read per connection instead of one each. The front door opens it as a
 * request comes in; it closes in the check phase that follows every poll phase (`setImmediate`), so a read taken while
 * it is open was taken in this poll phase, after it began, and a commit by another process (emsctl revoking a user or
 * rotating the secret) is seen by every request of every later turn: at most the requests answered in the same poll
 * phase as the commit itself may still be answered as of the turn's first read, as they would have been had the commit
 * come a moment later. A read outside an open turn (a timer, the collector) is never shared with a request: a
 * timer's read, taken before the poll phase, could predate a commit a request of that poll phase arrived after.
 * (Round 7 measured the read at 5–6 % of a signed-in request: two `fcntl` locks and an `fstat` each.)
 */
let turnOpen = false;
/** Which turn is open (or was last): a value read in an earlier turn never serves a later one. */
let turn = 0;
const closeTurn = () => {
  turnOpen = false;
};

/** Opens the request turn (the front door, at every request); a no-op while one is open. */
export function requestTurn(): void {
  if (turnOpen) return;
  turnOpen = true;
  turn += 1;
  setImmediate(closeTurn);
}

/** The open request turn's number, or 0 when none is open (a timer, the collector, a worker). */
export function openTurn(): number {
  return turnOpen ? turn : 0;
}
