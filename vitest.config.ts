import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'harness/**/*.test.ts', 'test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          setupFiles: ['test/integration/leave-nothing-behind.ts'],
          // Generous: every wait inside is for a condition, so a loaded machine only makes a passing test slower.
          testTimeout: 240_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          // A sandbox with a real node (kubelet, containerd, runc; needs root): ebb's claims on real containers.
          name: 'realnode',
          include: ['test/realnode/**/*.test.ts'],
          globalSetup: ['test/realnode/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          // Real containerd and a real registry as child processes (no apiserver): the CRI client's contract.
          name: 'runtime',
          include: ['test/runtime/**/*.test.ts'],
          globalSetup: ['test/runtime/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 150_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
