import { describe, expect, it } from 'vitest';
import { createLoggers, TurnBufferedDestination } from '../src/logger.js';

describe('logging', () => {
  it('writes the lines of one event-loop turn with one write, at the end of the turn', async () => {
    const writes: string[] = [];
    const destination = new TurnBufferedDestination({ write: (data) => writes.push(data) });
    const { logger, admissions } = createLoggers({ destination });
    logger.info('one');
    admissions.info({ uid: 'u' }, 'admission');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    expect(
      writes[0]
        ?.split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).msg),
    ).toEqual(['one', 'admission']);
    logger.info('two');
    destination.flush();
    expect(writes).toHaveLength(2);
  });

  it('redacts secrets in the general logger', async () => {
    const writes: string[] = [];
    const destination = new TurnBufferedDestination({ write: (data) => writes.push(data) });
    const { logger } = createLoggers({ destination });
    logger.info({ password: 'hunter2', registry: { token: 't0k3n' } }, 'login');
    destination.flush();
    expect(writes.join('')).not.toMatch(/hunter2|t0k3n/);
    expect(JSON.parse(writes[0] ?? '{}')).toMatchObject({
      password: '[redacted]',
      registry: { token: '[redacted]' },
    });
  });
});
