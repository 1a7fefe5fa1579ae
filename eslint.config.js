// Lint gate: type-aware rules that catch what strict TypeScript cannot (floating promises),
// and the determinism rule: wall-clock time and unseeded randomness only in core/clock|rng.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bin/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/core/clock.ts', 'src/core/rng.ts', 'src/cli/**', 'src/run/perf.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Read time from the injected Clock.' },
        { object: 'Math', property: 'random', message: 'Draw from a seeded Rng stream.' },
        { object: 'performance', property: 'now', message: 'Wall-clock timing belongs in run/perf.ts.' },
      ],
    },
  },
);
