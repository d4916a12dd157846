/**
 * Cold-start reference of the fallback, which uses no SDK client (so its SDK reference would
 * be an empty handler, Node's require of an empty file): the same OpenAPI document bundled and
 * answered by a bare handler, what serving it costs before any of our code.
 */
import openapi from '../../docs/openapi.json';

export const handler = async () => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(openapi),
});
