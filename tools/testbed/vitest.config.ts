import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({ testTimeout: 120_000, hookTimeout: 1_800_000, serial: true });
