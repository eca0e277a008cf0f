// Needs attention (/console): everything waiting for an operator, in one list, and the search box.
import type { App } from '../../app-types.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { renderPage, speechOf } from './console-page.ts';
import { readNeedsAttention } from './needs-attention.queries.ts';
import { readDb } from '../shared/read-db.ts';

export function needsAttentionPage(_deps: ConsoleDeps) {
  return async (scope: App) => {
    scope.get('/', async (request, reply) => {
      const { rows, more } = await readNeedsAttention(await readDb(request));
      return renderPage(request, reply, 'needs-attention', { title: speechOf(request).t('console.frame.nav.needsAttention'), rows, more });
    });
  };
}
