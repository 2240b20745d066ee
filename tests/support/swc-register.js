// Lets a plain `node` child process require the TypeScript sources (worker processes in recovery
// tests), with the same swc settings as jest.
'use strict';
const fs = require('node:fs');
const { transformSync } = require('@swc/core');
const options = require('../../swc.options.js');

require.extensions['.ts'] = function compile(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, { ...options, filename });
  module._compile(code, filename);
};
