import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { httpSender, RESPONSE_HEAD_BYTES, SNIPPET_BYTES } from '../../shared/delivery/sender';

/** A local receiver whose answer each test decides; counts connections and the bytes it handed to its sockets. */
async function receiver(answer: (res: ServerResponse, written: (n: number) => void) => void) {
  let connections = 0;
  let bytesWritten = 0;
  const server = createServer((req: IncomingMessage, res) => {
    req.resume();
    req.on('end', () => answer(res, (n) => (bytesWritten += n)));
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: new URL(`http://127.0.0.1:${port}/hook`),
    connections: () => connections,
    bytesWritten: () => bytesWritten,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Streams 64 KiB chunks for as long as the peer reads them; a body without end. */
function endless(res: ServerResponse, written: (n: number) => void) {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  res.writeHead(200, { 'content-type': 'text/plain' });
  const pump = () => {
    while (!res.destroyed && res.write(chunk, () => written(chunk.length)));
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('error', () => undefined);
  pump();
}

/** Every byte the sender's sockets read from the network, whatever the sender reports. */
function socketsRead() {
  const sockets: Socket[] = [];
  const onSocket = (message: unknown) => void sockets.push((message as { socket: Socket }).socket);
  subscribe('net.client.socket', onSocket);
  return {
    bytes: () => sockets.reduce((sum, s) => sum + s.bytesRead, 0),
    stop: () => unsubscribe('net.client.socket', onSocket),
  };
}

describe('httpSender against hostile receivers', () => {
  const sender = httpSender({ allowInsecureLocal: true }, 3000);
  const post = (url: URL) => sender.post(url, { 'content-type': 'application/json' }, '{"id":"evt_1"}');
  let read: ReturnType<typeof socketsRead>;
  beforeEach(() => {
    read = socketsRead();
  });
  afterEach(() => read.stop());

  it('stops reading an endless body once it has the status and 1 KiB: before the timeout, ≤ 64 KiB', async () => {
    const r = await receiver(endless);
    try {
      const result = await post(r.url);
      expect(result).toMatchObject({ status: 200, error: null, snippet: 'a'.repeat(SNIPPET_BYTES) });
      expect(result.durationMs).toBeLessThan(1000);
      expect(read.bytes()).toBeLessThanOrEqual(64 * 1024);
      // What the receiver could push before the closed connection stopped it: kernel buffers, not the body.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(r.bytesWritten()).toBeLessThan(10 * 1024 * 1024);
      // The half-read connection was closed, not pooled: the next attempt opens its own and is answered.
      const again = await post(r.url);
      expect(again.status).toBe(200);
      expect(r.connections()).toBe(2);
    } finally {
      await r.close();
    }
  });

  it("keeps the connection when the answer's length says it arrived whole with the snippet", async () => {
    const answer = JSON.stringify({ echo: 'b'.repeat(3000) });
    const r = await receiver((res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer),
    );
    try {
      const first = await post(r.url);
      expect(first.snippet).toBe(`{"echo":"${'b'.repeat(SNIPPET_BYTES - 9)}`);
      expect((await post(r.url)).status).toBe(200);
      expect(r.connections()).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('records an answer whose body is cut short by the receiver, without waiting for the timeout', async () => {
    const r = await receiver((res) => {
      res.writeHead(503, { 'content-length': '5000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    try {
      const result = await post(r.url);
      expect(result).toMatchObject({ status: 503, error: null, snippet: 'partial' });
      expect(result.durationMs).toBeLessThan(1000);
    } finally {
      await r.close();
    }
  });

  it(`refuses a response head over ${RESPONSE_HEAD_BYTES / 1024} KiB with an error that says so`, async () => {
    const r = await receiver((res) => res.writeHead(200, { 'x-padding': 'p'.repeat(RESPONSE_HEAD_BYTES) }).end('ok'));
    try {
      const result = await post(r.url);
      expect(result).toMatchObject({
        status: null,
        error: `response headers over ${RESPONSE_HEAD_BYTES / 1024} KiB`,
        snippet: null,
      });
      expect(read.bytes()).toBeLessThanOrEqual(RESPONSE_HEAD_BYTES + 64 * 1024);
    } finally {
      await r.close();
    }
  });

  /** A receiver that answers each connection's first request and treats a second one as `second` says. */
  function secondOnSocket(second: (res: ServerResponse, socket: Socket) => void) {
    const perSocket = new WeakMap<Socket, number>();
    let requests = 0;
    const started = receiver((res) => {
      const socket = res.socket as Socket;
      const n = (perSocket.get(socket) ?? 0) + 1;
      perSocket.set(socket, n);
      requests++;
      if (n > 1) second(res, socket);
      else res.writeHead(200, { 'content-length': '2' }).end('ok');
    });
    return { started, requests: () => requests };
  }

  it('sends again on a new connection when the receiver reset a kept-alive one, within the attempt', async () => {
    // A second request on a connection is reset, as by a receiver that had just closed it while idle.
    const { started, requests } = secondOnSocket((_res, socket) => socket.resetAndDestroy());
    const r = await started;
    try {
      expect((await post(r.url)).status).toBe(200);
      const again = await post(r.url);
      expect(again).toMatchObject({ status: 200, error: null, snippet: 'ok' });
      expect(requests()).toBe(3);
      expect(r.connections()).toBe(2);
    } finally {
      await r.close();
    }
  });

  it('keeps the status when a pooled connection is reset after the answer began: no second request', async () => {
    const { started, requests } = secondOnSocket((res, socket) => {
      res.writeHead(202, { 'content-length': '100' });
      res.write('part');
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    const r = await started;
    try {
      await post(r.url);
      expect(await post(r.url)).toMatchObject({ status: 202, error: null, snippet: 'part' });
      expect(requests()).toBe(2);
    } finally {
      await r.close();
    }
  });

  /** A receiver's handler: answers its first request, resets the kept connection under the second after `ms`. */
  const answerThenReset = (ms: number, count: () => number) => (res: ServerResponse) => {
    const n = count();
    if (n === 1) res.writeHead(200, { 'content-length': '2' }).end('ok');
    if (n === 2) setTimeout(() => (res.socket as Socket).resetAndDestroy(), ms);
  };

  it('bounds both requests by one timeout: a resend gets only what the first left', async () => {
    const slow = httpSender({ allowInsecureLocal: true }, 2000);
    let requests = 0;
    // Answers the first; resets the kept connection under the second after 1 s; never answers its resend.
    const r = await receiver(answerThenReset(1000, () => ++requests));
    try {
      await slow.post(r.url, {}, '{}');
      const result = await slow.post(r.url, {}, '{}');
      expect(result).toMatchObject({ status: null, error: 'timeout after 2000 ms' });
      expect(requests).toBe(3);
      expect(r.connections()).toBe(2);
      expect(result.durationMs).toBeGreaterThanOrEqual(1990);
      // Not 1 s and then a whole 2 s timeout of its own.
      expect(result.durationMs).toBeLessThan(2700);
    } finally {
      await r.close();
    }
  });

  it('does not send again with under 100 ms of the attempt left: the first error stands', async () => {
    const quick = httpSender({ allowInsecureLocal: true }, 600);
    let requests = 0;
    // Answers the first; resets the kept connection under the second 550 ms into its 600.
    const r = await receiver(answerThenReset(550, () => ++requests));
    try {
      await quick.post(r.url, {}, '{}');
      const result = await quick.post(r.url, {}, '{}');
      expect(result).toMatchObject({ status: null, snippet: null });
      expect(requests).toBe(2);
    } finally {
      await r.close();
    }
  });

  it('does not send again when a new connection is reset: that receiver failed the attempt', async () => {
    let requests = 0;
    const r = await receiver((res) => {
      requests++;
      (res.socket as Socket).resetAndDestroy();
    });
    try {
      const result = await post(r.url);
      expect(result).toMatchObject({ status: null, snippet: null });
      expect(result.error).toMatch(/^ECONNRESET/);
      expect(requests).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('still times out a receiver that sends its status and then nothing', async () => {
    const quick = httpSender({ allowInsecureLocal: true }, 300);
    const r = await receiver((res) => res.writeHead(200, { 'content-type': 'text/plain' }).write('x'));
    try {
      const result = await quick.post(r.url, {}, '{}');
      expect(result).toMatchObject({ status: null, error: 'timeout after 300 ms', snippet: null });
      expect(result.durationMs).toBeGreaterThanOrEqual(290);
    } finally {
      await r.close();
    }
  });
});
