import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/data/**', '**/.models/**', 'cloud/src/generated/**', '**/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      // Node's globals, for the few plain JavaScript files (TypeScript files are checked by tsc).
      globals: Object.fromEntries(
        ['process', 'console', 'URL', 'Buffer', 'fetch', 'performance', 'setTimeout', 'clearTimeout'].map(
          (g) => [g, 'readonly'],
        ),
      ),
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // The person-facing pages run in the browser.
    files: ['cloud/src/modules/pages/assets/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'document',
          'location',
          'history',
          'navigator',
          'localStorage',
          'sessionStorage',
          'confirm',
          'FileReader',
          'createImageBitmap',
          'Intl',
          'URLSearchParams',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
);
