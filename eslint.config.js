import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import path into harness/, test/ or bench/. */
const PRODUCT_BOUNDARY = '(^|/)(harness|test|bench)/';
const BOUNDARY_MESSAGE = 'src/ is the product: it must not import from harness/, test/ or bench/.';

export default tseslint.config(
  { ignores: ['dist/', 'bin/', '.tools/', '.sandbox/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      complexity: ['error', 15],
      'max-depth': ['error', 4],
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-params': ['error', 5],
    },
  },
  {
    // The product (src/, its tests aside) depends on nothing from the development harness, the tests or the benchmarks.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: PRODUCT_BOUNDARY, message: BOUNDARY_MESSAGE }] }],
      'no-restricted-syntax': ['error', { selector: `ImportExpression[source.value=/${PRODUCT_BOUNDARY.replaceAll('/', '\\/')}/]`, message: BOUNDARY_MESSAGE }],
    },
  },
  {
    // Settings come from each process's parsed config (src/common/settings.ts); only config.ts reads the environment.
    files: ['src/**/*.ts'],
    ignores: ['src/**/config.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: "Only a process's config.ts reads process.env: take the setting from its parsed config." },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/unbound-method': 'off' },
  },
);
