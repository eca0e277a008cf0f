// A stand-in for a PostgreSQL server older than the service supports, speaking just enough of the wire protocol
// (protocol 3.0: trust authentication, simple queries) to report its version. The one fault tests cannot get from a
// real server: this machine runs only supported majors, and adding a PostgreSQL 14 build to the dependencies just to
// be refused by it is not worth its 60 MB. Any other query is answered with an error, so a process that went past
// the version check would fail loudly instead of passing.
import { createServer, type Server, type Socket } from 'node:net';

export interface OldPostgres {
  url: string;
  /** The queries the processes sent, in order. */
  queries: string[];
  close(): Promise<void>;
}

function message(type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([Buffer.from(type, 'latin1'), length, body]);
}

const cstring = (text: string) => Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from([0])]);
const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const readyForQuery = () => message('Z', Buffer.from('I', 'latin1'));

/** RowDescription and one DataRow of text columns. */
function row(values: Record<string, string>): Buffer {
  const names = Object.keys(values);
  const description = Buffer.concat([
    int16(names.length),
    ...names.map((name) => Buffer.concat([cstring(name), int32(0), int16(0), int32(25), int16(-1), int32(-1), int16(0)])),
  ]);
  const data = Buffer.concat([
    int16(names.length),
    ...Object.values(values).map((value) => {
      const bytes = Buffer.from(value, 'utf8');
      return Buffer.concat([int32(bytes.length), bytes]);
    }),
  ]);
  return Buffer.concat([message('T', description), message('D', data), message('C', cstring('SELECT 1'))]);
}

function error(text: string): Buffer {
  return message('E', Buffer.concat([cstring('SERROR'), cstring('C0A000'), cstring(`M${text}`), Buffer.from([0])]));
}

/** A server that says it is PostgreSQL `name` (server_version) with server_version_num `num`. */
export async function startOldPostgres(name: string, num: number): Promise<OldPostgres> {
  const queries: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        // The startup message has no type byte; every later one has.
        const offset = started ? 1 : 0;
        if (buffered.length < offset + 4) return;
        const length = buffered.readInt32BE(offset);
        if (buffered.length < offset + length) return;
        const type = started ? String.fromCharCode(buffered[0]!) : '';
        const body = buffered.subarray(offset + 4, offset + length);
        buffered = buffered.subarray(offset + length);
        if (!started) {
          started = true;
          socket.write(
            Buffer.concat([
              message('R', int32(0)),
              message('S', Buffer.concat([cstring('server_version'), cstring(name)])),
              message('S', Buffer.concat([cstring('client_encoding'), cstring('UTF8')])),
              message('K', Buffer.concat([int32(1), int32(2)])),
              readyForQuery(),
            ]),
          );
        } else if (type === 'Q') {
          const sql = body.subarray(0, body.length - 1).toString('utf8');
          queries.push(sql);
          const answer = sql.includes("current_setting('server_version_num')")
            ? row({ num: String(num), name })
            : error(`this stand-in for PostgreSQL ${name} answers only the version query`);
          socket.write(Buffer.concat([answer, readyForQuery()]));
        } else if (type === 'P') {
          // Extended protocol (a query with parameters): refused at Parse; as a server does after an error, the
          // rest is ignored until Sync.
          queries.push(body.subarray(body.indexOf(0) + 1, body.indexOf(0, body.indexOf(0) + 1)).toString('utf8'));
          socket.write(error(`this stand-in for PostgreSQL ${name} answers only the version query`));
        } else if (type === 'S') {
          socket.write(readyForQuery());
        } else if (type === 'X') {
          socket.end();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `postgresql://billing:billing@127.0.0.1:${port}/billing`,
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
