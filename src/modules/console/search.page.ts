// Search (/console/search?q=): any id, orderId, transactionId or userId, from the box on Needs attention.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { renderPage, speechOf } from './console-page.ts';
import { search } from './search.queries.ts';
import { readDb } from '../shared/read-db.ts';

const SearchQuery = Type.Object({ q: Type.Optional(Type.String({ maxLength: 200 })) });

export function searchPage(_deps: ConsoleDeps) {
  return async (scope: App) => {
    scope.get('/search', { schema: { querystring: SearchQuery } }, async (request, reply) => {
      const q = request.query.q?.trim() ?? '';
      const hits = await search(await readDb(request), q);
      const { t } = speechOf(request);
      return renderPage(request, reply, 'search', { title: q ? t('console.frame.search.title', { q }) : t('console.frame.search.heading'), q, hits });
    });
  };
}
