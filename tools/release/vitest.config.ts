import { signetTestConfig } from '../../vitest.shared.ts';

// One file at a time: the release test starts a registry and installs into fresh projects; the
// others are quick checks of the repository.
export default signetTestConfig({ testTimeout: 300_000, hookTimeout: 900_000, serial: true });
