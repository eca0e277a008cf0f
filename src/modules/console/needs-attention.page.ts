// Needs attention (/console): everything waiting for an operator, in one list, and the search box.
import type { App } from '../../app-types.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { renderPage, speechOf } from './console-page.ts';
import { readNeedsAttention } from './needs-attention.queries.ts';

export function needsAttentionPage(deps: ConsoleDeps) {
  const { db } = deps.service;
  return async (scope: App) => {
    scope.get('/', async (request, reply) => {
      const { rows, more } = await readNeedsAttention(db);
      return renderPage(request, reply, 'needs-attention', { title: speechOf(request).t('console.frame.nav.needsAttention'), rows, more });
    });
  };
}
