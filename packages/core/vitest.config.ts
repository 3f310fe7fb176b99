import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({ passWithNoTests: true });
