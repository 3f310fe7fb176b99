/**
 * @signet/core: rollout-safe admission decisions and sigstore policy matching. Pure code: no
 * network, no file system, no clock.
 */
export * from './decide.js';
export { describeCause } from './describe.js';
export * from './equality.js';
export * from './errors.js';
export * from './glob.js';
export { changedImages } from './image-changes.js';
export * from './match.js';
export * from './patch.js';
export * from './plan.js';
export * from './reference.js';
export * from './response.js';
export * from './selector.js';
export * from './verdict.js';
