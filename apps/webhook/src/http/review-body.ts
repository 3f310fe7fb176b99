// The body middleware of the admission chain: the review's body read within the app's limits and
// budget (body.ts) into its exchange, or refused.
import { BodyError, readBody } from './body.js';
import { exchangeOf, type Middleware } from './exchange.js';
import { refuse } from './respond.js';

/**
 * The body middleware: reads the review's body into its exchange, or refuses it (413, 408, 503)
 * and closes the connection, since what is left of the body is not read.
 */
export const readReviewBody: Middleware = (req, res, next) => {
  const exchange = exchangeOf(res);
  const { limits, budget } = exchange.settings;
  readBody(req, limits, budget).then(
    (body) => {
      exchange.body = body;
      next();
    },
    (error: unknown) =>
      refuse(res, exchange, error instanceof BodyError ? error.status : 400, error, { close: true }),
  );
};
