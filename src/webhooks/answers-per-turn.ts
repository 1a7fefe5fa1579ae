import { Socket } from 'node:net';

/**
 * Makes a server socket send the answers of one turn of the event loop in one write.
 *
 * node:http answers pipelined requests one after the other: the next answer is attached to the
 * socket only when the previous one's write has completed, and `end()` uncorks the socket, so
 * 16 pipelined requests cost 16 `write` syscalls (each waking the client), whatever is corked
 * from outside. Here the socket's write implementation (`_write`/`_writev`, the documented
 * hooks of a Writable) takes the bytes into a list and reports them written at once, so
 * node:http moves on to the next answer in the same turn; the list goes out in one `writev`
 * when the turn's I/O is done (`setImmediate`). What stays as node:http has it:
 *
 * - order: bytes leave in the order they were written (one list, one writev at a time queued
 *   in libuv in order);
 * - backpressure: while a real write is still in the kernel's queue (a client that does not
 *   read), a write is acknowledged only when that real write completes, so the Writable
 *   buffers, reports `needDrain`, and node:http stops reading requests from that client: at
 *   most one turn's answers are held beyond what node:http itself would hold;
 * - end: `_final` (a `Connection: close` answer, `destroySoon`) sends the list before the
 *   shutdown, which libuv runs after the writes queued before it;
 * - errors: a failed real write destroys the socket with the error (node:http's own handling).
 */
export function answersPerTurn(socket: Socket): void {
  type Chunk = { chunk: Buffer | string; encoding: BufferEncoding };
  type Done = (err?: Error | null) => void;
  const realWritev = Socket.prototype._writev as (this: Socket, chunks: Chunk[], cb: Done) => void;
  const realFinal = Socket.prototype._final as (this: Socket, cb: Done) => void;
  let held: Chunk[] = [];
  let scheduled = false;
  /** Real writes not yet completed (still in the kernel's queue). */
  let inFlight = 0;
  /** The Writable's callback of a write that arrived while a real one was in flight. */
  let waiting: Done | null = null;

  const flush = (): void => {
    scheduled = false;
    if (held.length === 0 || socket.destroyed) return;
    const chunks = held;
    held = [];
    inFlight++;
    realWritev.call(socket, chunks, (err) => {
      inFlight--;
      if (err) {
        socket.destroy(err);
        return;
      }
      const w = waiting;
      waiting = null;
      if (w !== null) {
        flush(); // what arrived behind the slow write, then let the Writable go on
        w();
      }
    });
  };
  const take = (chunks: readonly Chunk[], cb: Done): void => {
    for (const c of chunks) held.push(c);
    if (inFlight > 0) {
      waiting = cb; // acknowledged when the real write completes: backpressure as usual
      return;
    }
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    cb();
  };
  socket._write = (chunk: Buffer | string, encoding: BufferEncoding, cb: Done): void => take([{ chunk, encoding }], cb);
  socket._writev = (chunks: Chunk[], cb: Done): void => take(chunks, cb);
  socket._final = (cb: Done): void => {
    flush();
    realFinal.call(socket, cb);
  };
}
