// The one door of the routes to the read replica (docs/production.md "Read replica"). A route that only reads opts in
// by calling readDb(request) after any write of its own (the events feed numbers events on the primary first) and
// reading from the client it answers: the replica once it has replayed every write committed before the call, else
// the primary (src/db/read-router.ts decides). A route that answers a write (POST, PATCH, DELETE) cannot use it: it
// throws. Nothing that decides money, takes a lease or writes imports this module (test/architecture.test.ts).
import type { FastifyRequest } from 'fastify';
import type { Db } from '../../db/prisma.ts';

/** The client a GET reads its answer from (the replica or the primary); see the file's header. */
export async function readDb(request: FastifyRequest): Promise<Db> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    throw new Error(`readDb: ${request.method} answers a write and reads the primary`);
  }
  return request.server.reads.readDb();
}
