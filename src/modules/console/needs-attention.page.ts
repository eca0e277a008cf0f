// Needs attention (/console): everything waiting for an operator, in one list, and the search box.
import type { App } from '../../app-types.ts';
import { renderPage } from './console-page.ts';
import type { ConsoleDeps } from './console-deps.ts';

export function needsAttentionPage(_deps: ConsoleDeps) {
  return async (scope: App) => {
    scope.get('/', async (request, reply) => renderPage(request, reply, 'needs-attention', { title: 'Needs attention', rows: [] }));
  };
}
