import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({ testTimeout: 30_000 });
