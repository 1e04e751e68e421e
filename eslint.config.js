import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', 'examples/plugin-host-c/build/**', 'plugin/plugin_license/plc/build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-control-regex': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
          message: "use import * as z from 'zod': with the named form the bundler keeps all of zod (every locale) in the agent and the CLI",
        },
        {
          // One privacy style for classes (docs/architecture.md): ECMAScript private members, which
          // are private at run time too. A private constructor has no # form and stays allowed.
          selector: ":matches(PropertyDefinition, MethodDefinition[kind!='constructor'], AccessorProperty, TSParameterProperty, TSAbstractPropertyDefinition, TSAbstractMethodDefinition)[accessibility='private']",
          message: 'use an ECMAScript private member (#name), not the private keyword: # is private at run time too, and is the one style of this code',
        },
      ],
    },
  },
  {
    // The license manager's page runs in the browser.
    files: ['packages/cli/page/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The executables are CommonJS (bin/package.json): Node starts a CommonJS main faster.
    files: ['**/bin/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
