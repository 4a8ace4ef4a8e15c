import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Longest time the rest of a refused body is read (and dropped) after the answer, before the connection is cut. */
export const LINGER_MS = 5_000;

/**
 * For an answer sent before the request's body has all arrived (a refused upload), which says
 * `Connection: close` (the caller sets it: the connection cannot be reused with the rest of a body
 * unread in it). This makes the close a lingering one, as nginx and Apache do: Node would close the
 * socket as soon as the answer is written, and a client still sending its body (an upload streamed
 * by fetch, as `devstream-hub upload` does) then fails on EPIPE or a reset, often before it has
 * read the answer. Instead the answer is followed by a FIN while the rest of the body is read and
 * dropped; the socket is closed once the body has ended, the client has closed its side, or
 * LINGER_MS has passed, whichever comes first.
 */
export function lingerAfterAnswer(request: IncomingMessage): void {
  const socket = request.socket as Socket & { destroySoon?: () => void };
  request.unpipe();
  request.resume();
  if (socket.destroyed || typeof socket.destroySoon !== 'function') return;
  // Node calls destroySoon() once a `Connection: close` answer is written (resOnFinish).
  socket.destroySoon = () => {
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    // Closed once the answer (and the FIN after it) has been written.
    const close = () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy()));
    socket.once('end', close);
    if (request.complete) close();
    else request.once('end', close);
    socket.end();
  };
}
